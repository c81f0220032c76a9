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
// Only a path of this console (the server checks again): no control
// characters, spaces or backslashes, which browsers would read as another site.
if (next && next.startsWith('/') && !next.startsWith('//') && !/[\u0000-\u0020\u007f-\u00a0\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\\]/.test(next)) {
  document.getElementById('next').value = next;
}
