// Web Push on this device: the service worker, the browser's subscription
// to its push service with rein's key, and rein's record of it.
import { api } from './lib.js';

/** supported reports whether this browser can receive Web Push at all. */
export function supported() {
  return 'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window;
}

/** b64url encodes bytes as base64url without padding. */
export function b64url(bytes) {
  let s = '';
  for (const b of new Uint8Array(bytes)) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** current is this browser's push subscription, or null. */
export async function current() {
  if (!supported()) return null;
  const reg = await navigator.serviceWorker.getRegistration('/');
  return reg ? reg.pushManager.getSubscription() : null;
}

/** deviceName guesses a name for this device: "Chrome on Android". */
export function deviceName() {
  const ua = navigator.userAgent;
  const browser = /Edg\//.test(ua) ? 'Edge' : /Firefox\//.test(ua) ? 'Firefox' : /Chrom(e|ium)\//.test(ua) ? 'Chrome'
    : /Safari\//.test(ua) ? 'Safari' : 'Browser';
  const os = /Android/.test(ua) ? 'Android' : /iPhone|iPad/.test(ua) ? 'iOS' : /Mac OS X/.test(ua) ? 'macOS'
    : /Windows/.test(ua) ? 'Windows' : /Linux/.test(ua) ? 'Linux' : '';
  return os ? `${browser} on ${os}` : browser;
}

/**
 * subscribe asks for permission, subscribes this browser with rein's key
 * (again, when the key changed) and records the subscription in rein.
 */
export async function subscribe(label) {
  const permission = await Notification.requestPermission();
  if (permission !== 'granted') {
    throw new Error('Notifications are blocked for this site. Allow them in the browser\'s site settings, then try again.');
  }
  const { public_key: key } = await api('GET', '/v1/push');
  const reg = await navigator.serviceWorker.register('/sw.js', { scope: '/' });
  await navigator.serviceWorker.ready;
  let sub = await reg.pushManager.getSubscription();
  if (sub && (!sub.options || !sub.options.applicationServerKey || b64url(sub.options.applicationServerKey) !== key)) {
    await sub.unsubscribe();
    sub = null;
  }
  if (!sub) {
    try {
      sub = await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
    } catch (x) {
      throw new Error(`This browser could not subscribe to its push service: ${x.message}`);
    }
  }
  const j = sub.toJSON();
  return api('POST', '/v1/push/subscriptions', { endpoint: j.endpoint, expirationTime: j.expirationTime ?? null,
    keys: { p256dh: j.keys.p256dh, auth: j.keys.auth }, label });
}

/** unsubscribe removes a device from rein, and this browser's subscription when it is this device. */
export async function unsubscribe(device) {
  await api('DELETE', `/v1/push/subscriptions/${encodeURIComponent(device.id)}`);
  const sub = await current();
  if (sub && sub.endpoint === device.endpoint) await sub.unsubscribe();
}
