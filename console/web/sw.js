// The console's service worker: it shows the Web Push notifications rein
// sends (a new approval, a reminder, a test) and takes an approval's
// notification away once it is decided. It caches nothing: an approval
// is only ever shown as the server has it now.

self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));

self.addEventListener('push', (e) => {
  let msg = {};
  try {
    msg = e.data ? e.data.json() : {};
  } catch {
    msg = {};
  }
  e.waitUntil(show(msg));
});

async function show(msg) {
  const reg = self.registration;
  if (msg.type === 'closed') {
    for (const n of await reg.getNotifications({ tag: msg.id })) n.close();
    return;
  }
  if (msg.type !== 'approval' && msg.type !== 'test') {
    return reg.showNotification('rein', { body: 'Open the console to see what is new.', tag: 'rein', data: { url: '/inbox' } });
  }
  return reg.showNotification(msg.title || 'rein', {
    body: msg.body || '',
    tag: msg.id,
    renotify: !!msg.renotify,
    requireInteraction: msg.type === 'approval',
    icon: '/assets/icon-192.png',
    timestamp: Date.now(),
    data: { url: sameOrigin(msg.url), id: msg.id, expires_at: msg.expires_at || null },
  });
}

// sameOrigin keeps a notification's link inside the console.
function sameOrigin(url) {
  try {
    const u = new URL(url || '/inbox', self.location.origin);
    return u.origin === self.location.origin ? u.pathname + u.search : '/inbox';
  } catch {
    return '/inbox';
  }
}

self.addEventListener('notificationclick', (e) => {
  e.notification.close();
  const path = sameOrigin(e.notification.data && e.notification.data.url);
  // A page of the approval already open is focused, whatever version the
  // link names (?revision=): it shows the approval as it is now, kept
  // current by the event stream, as a page opened anew does.
  const page = new URL(path, self.location.origin).pathname;
  e.waitUntil((async () => {
    const open = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
    for (const c of open) {
      if (new URL(c.url).pathname === page && 'focus' in c) return c.focus();
    }
    return self.clients.openWindow(path);
  })());
});
