// Passkeys in the browser: adding one (the Passkeys page) and confirming a
// vote with one on approvals that need step-up. The browser's WebAuthn API
// runs the ceremony with the authenticator; rein verifies the answer.
import { api } from './lib.js';

function fromB64u(s) {
  const b = atob(s.replace(/-/g, '+').replace(/_/g, '/'));
  return Uint8Array.from(b, (c) => c.charCodeAt(0)).buffer;
}

function toB64u(buf) {
  let s = '';
  for (const b of new Uint8Array(buf)) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

// rein sends WebAuthn options as JSON, binary fields base64url.
function creationOptions(o) {
  const pk = structuredClone(o.publicKey);
  pk.challenge = fromB64u(pk.challenge);
  pk.user.id = fromB64u(pk.user.id);
  for (const c of pk.excludeCredentials || []) c.id = fromB64u(c.id);
  return { publicKey: pk };
}

function requestOptions(o) {
  const pk = structuredClone(o.publicKey);
  pk.challenge = fromB64u(pk.challenge);
  for (const c of pk.allowCredentials || []) c.id = fromB64u(c.id);
  return { publicKey: pk };
}

function credentialJSON(c) {
  if (typeof c.toJSON === 'function') return c.toJSON();
  const r = c.response;
  const response = { clientDataJSON: toB64u(r.clientDataJSON) };
  if (r.attestationObject) response.attestationObject = toB64u(r.attestationObject);
  if (r.authenticatorData) response.authenticatorData = toB64u(r.authenticatorData);
  if (r.signature) response.signature = toB64u(r.signature);
  if (r.userHandle) response.userHandle = toB64u(r.userHandle);
  if (r.getTransports) response.transports = r.getTransports();
  return { id: c.id, rawId: toB64u(c.rawId), type: c.type, response, clientExtensionResults: c.getClientExtensionResults() };
}

async function assert(path) {
  const c = await api('POST', path);
  const cred = await navigator.credentials.get(requestOptions(c.options));
  return { ceremony: c.ceremony, credential: credentialJSON(cred) };
}

/** confirmVote returns the passkey confirmation a vote on the approval carries as step_up. */
export function confirmVote(approvalID) {
  return assert(`/v1/approvals/${encodeURIComponent(approvalID)}/step-up`);
}

/** addPasskey registers a passkey; with one already, it confirms with it first. */
export async function addPasskey(label) {
  const { passkeys } = await api('GET', '/v1/passkeys');
  const body = passkeys.length ? { confirmation: await assert('/v1/passkeys/confirmation') } : {};
  const r = await api('POST', '/v1/passkeys/registration', body);
  const cred = await navigator.credentials.create(creationOptions(r.options));
  return api('POST', '/v1/passkeys', { ceremony: r.ceremony, credential: credentialJSON(cred), label });
}
