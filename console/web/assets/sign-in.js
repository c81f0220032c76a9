// The sign-in page: explains why the last attempt failed and keeps the
// page to return to. Messages are fixed texts chosen by a code.
const messages = {
  missing: 'Enter an API key.',
  unknown: 'That key is not recognised or has been revoked.',
  role: 'That key cannot sign in: the console is for approver, admin and auditor keys (agent keys cannot approve).',
  unavailable: 'rein cannot check keys right now (the store is unavailable). Try again in a moment.',
};
const q = new URLSearchParams(location.search);
const msg = document.getElementById('message');
if (q.get('error')) {
  msg.textContent = messages[q.get('error')] || 'Sign-in failed.';
  msg.classList.add('error');
  msg.hidden = false;
} else if (q.get('signed_out')) {
  msg.textContent = 'You are signed out.';
  msg.hidden = false;
}
const next = q.get('next');
if (next && next.startsWith('/') && !next.startsWith('//')) {
  document.getElementById('next').value = next;
}
