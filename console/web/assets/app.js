// The console's page shell: who is signed in, the navigation, and the page
// the path names.
import { h, fill, me, hasRole, setAllTenants, errorBox } from './lib.js';

const routes = [
  { re: /^\/inbox$/, page: 'inbox', title: 'Inbox' },
  { re: /^\/activity$/, page: 'activity', title: 'Activity' },
  { re: /^\/sessions\/([^/]+)$/, page: 'session', title: 'Session' },
  { re: /^\/approvals\/([^/]+)$/, page: 'approval', title: 'Approval' },
  { re: /^\/questions\/([^/]+)$/, page: 'question', title: 'Question' },
  { re: /^\/reviews$/, page: 'reviews', title: 'Reviews' },
  { re: /^\/reviews\/([^/]+)$/, page: 'review', title: 'Review' },
  { re: /^\/audit$/, page: 'audit', title: 'Audit' },
  { re: /^\/policy$/, page: 'policy', title: 'Policy' },
  { re: /^\/admin$/, page: 'admin', title: 'Admin' },
  { re: /^\/passkeys$/, page: 'passkeys', title: 'Devices' },
];

const nav = [
  { href: '/inbox', text: 'Inbox', roles: ['approver', 'admin', 'auditor'] },
  { href: '/activity', text: 'Activity', roles: ['approver', 'admin', 'auditor'] },
  { href: '/reviews', text: 'Reviews', roles: ['approver', 'admin', 'auditor'] },
  { href: '/audit', text: 'Audit', roles: ['admin', 'auditor'] },
  { href: '/policy', text: 'Policy', roles: ['admin', 'auditor'] },
  { href: '/admin', text: 'Admin', roles: ['admin'] },
  { href: '/passkeys', text: 'Devices', roles: ['approver', 'admin'] },
];

async function main() {
  const main = document.getElementById('main');
  let who;
  try {
    who = await me();
  } catch (err) {
    fill(main, errorBox(err));
    return;
  }
  setAllTenants(who.tenant === '*');
  const path = location.pathname;
  fill(document.getElementById('nav'), nav.filter((n) => hasRole(who, ...n.roles)).map((n) =>
    h('a', { href: n.href, 'aria-current': path.startsWith(n.href) ? 'page' : null }, n.text)));
  fill(document.getElementById('who'),
    h('span', { class: 'me', title: `roles: ${who.roles.join(', ')}; groups: ${(who.groups || []).join(', ') || 'none'}` },
      who.name, h('span', { class: 'muted' }, ' @ ' + who.tenant)),
    h('form', { method: 'post', action: '/sign-out', class: 'inline' },
      h('input', { type: 'hidden', name: 'csrf', value: who.csrf }),
      h('button', { type: 'submit', class: 'link', id: 'sign-out' }, 'Sign out')));
  const route = routes.find((r) => r.re.test(path));
  if (!route) {
    fill(main, h('p', { class: 'notice' }, 'No such page.'));
    return;
  }
  const arg = decodeURIComponent((path.match(route.re) || [])[1] || '');
  document.title = `${route.title}${arg ? ' ' + arg : ''} · rein`;
  try {
    const mod = await import(`./pages/${route.page}.js`);
    fill(main);
    await mod.render(main, { who, arg });
  } catch (err) {
    fill(main, errorBox(err));
  }
}

main();
