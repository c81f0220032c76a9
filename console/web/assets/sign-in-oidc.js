// Sign-in with the company's identity provider, when rein has one
// configured (oidc in rein.yaml): a button above the API-key form, and the
// reason when a sign-in there was refused. Messages are fixed texts chosen
// by a code.
const messages = {
  oidc_unavailable: 'The identity provider cannot be reached right now. Try again in a moment, or sign in with an API key.',
  oidc_expired: 'That sign-in took too long or was started in another browser. Start again.',
  oidc_denied: 'The identity provider did not sign you in.',
  oidc_failed: 'The identity provider\'s answer could not be verified. Start again.',
  oidc_unverified: 'Your identity provider does not say that your e-mail address is verified.',
  oidc_identity: 'Your account at the identity provider cannot be used as a rein identity.',
  oidc_unknown: 'Your account has no access to rein: ask an admin to add you to an approver group.',
  oidc_taken: 'A rein key already has your name; ask an admin to map your account to it.',
  oidc_nokey: 'rein could not find or create your identity (two active keys with your name, or the store is unavailable).',
  oidc_role: 'Your rein identity cannot sign in to the console (it needs the approver, admin or auditor role).',
};
const q = new URLSearchParams(location.search);
const code = q.get('error') || '';
if (code.startsWith('oidc_')) {
  const msg = document.getElementById('message');
  msg.textContent = messages[code] || 'Sign-in with the identity provider failed.';
  msg.classList.add('error');
  msg.hidden = false;
}
const res = await fetch('/sign-in/oidc/options', { credentials: 'same-origin' }).catch(() => null);
if (res && res.ok && (res.headers.get('content-type') || '').startsWith('application/json')) {
  const opts = await res.json();
  const n = q.get('next');
  const next = n && n.startsWith('/') && !n.startsWith('//') ? n : '/inbox';
  // A navigation, not a form: the console's form-action 'self' would stop
  // a form at the redirect to the provider.
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'primary';
  button.id = 'oidc-sign-in';
  button.textContent = 'Sign in with ' + opts.label;
  button.addEventListener('click', () => location.assign(opts.start + '?next=' + encodeURIComponent(next)));
  const or = document.createElement('p');
  or.className = 'muted';
  or.textContent = 'or with an API key:';
  document.getElementById('sign-in-form').before(button, or);
}
