// The web console in a real browser: Debian's chromium, driven headless by playwright-core
// (launched with /usr/bin/chromium; nothing is downloaded), against `schemagate demo`.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { startSchemagate } from './schemagate_process.mjs';

const shots = process.env.SCREENSHOT_DIR || join(tmpdir(), 'schemagate-console-shots');
const admin = 'console-test-admin-key-0123456789';
let base, server, browser, page, clientKey;

async function call(method, path, body, key = admin) {
  const r = await fetch(base + path, {
    method,
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${key}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: r.status, body: await r.json().catch(() => null) };
}

before(async () => {
  server = await startSchemagate('demo', ['--evolution-interval-ms', '100'], { SCHEMAGATE_ADMIN_KEY: admin });
  base = server.base;
  mkdirSync(shots, { recursive: true });
  clientKey = (await call('POST', '/keys', { client_id: 'alice', role: 'client' })).body.key;
  assert.ok(clientKey, 'a client key');
  // Enough agents to page through, and one that only bob may see.
  for (let i = 1; i <= 4; i++) {
    const r = await call('POST', '/agents', { id: `helper-${i}`, name: `Helper ${i}`, description: `Helper number ${i}.`,
      endpoint: 'http://127.0.0.1:9/x', inputs: { text: 'string' } });
    assert.equal(r.status, 201);
  }
  const secret = await call('POST', '/agents', { id: 'secret-agent', name: 'Secret flight agent',
    description: 'Books secret flights to Shanghai.', endpoint: 'http://127.0.0.1:9/x', inputs: { text: 'string' },
    visibility: { clients: ['bob'] } });
  assert.equal(secret.status, 201);
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu'] });
  page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
});

after(async () => {
  await browser?.close();
  server?.stop();
});

test('log in with a client key, search, open flight-booking, book with Figure 8 values', async () => {
  await page.goto(`${base}/ui/`);
  await page.fill('#api-key', clientKey);
  await page.click('#key-form button');
  await page.waitForSelector('#key-state:has-text("key set")');
  assert.equal(await page.inputValue('#api-key'), '', 'the key is never shown again');
  assert.ok(!(await page.content()).includes(clientKey), 'nor anywhere on the page');
  await page.fill('#q', 'fly to Shanghai');
  await page.click('#search button[type=submit]');
  await page.waitForSelector('#results a');
  const names = await page.locator('#results a').allTextContents();
  assert.equal(names[0], 'Flight booking agent');
  assert.ok(!names.includes('Secret flight agent'), 'alice does not see bob\'s private agent');
  await page.screenshot({ path: join(shots, 'discover.png') });

  await page.click('#results a >> nth=0');
  await page.waitForSelector('[id="f/origin"]');
  await page.fill('[id="f/origin"]', 'PEK');
  await page.fill('[id="f/destination"]', 'SHA');
  await page.fill('[id="f/departure_date"]', '2026-05-04');
  await page.selectOption('[id="f/cabin_class"]', '"business"');
  await page.fill('[id="f/passenger_count"]', '1');
  await page.fill('[id="f/other"]', 'window seat');
  await page.click('form.invoke button[type=submit]');
  await page.waitForSelector('.reply pre');
  const reply = JSON.parse(await page.locator('.reply pre').textContent());
  assert.equal(reply.status, 'confirmed');
  assert.match(reply.seat, /A$/, 'the window seat reached the agent');
  await page.screenshot({ path: join(shots, 'agent-booked.png'), fullPage: true });

  // A passenger count the template does not allow: the server's own message beside that field,
  // from the console's checks, before anything is sent.
  const invokes = [];
  const watch = (req) => { if (req.url().includes('/invoke')) invokes.push(req.url()); };
  page.on('request', watch);
  await page.fill('[id="f/passenger_count"]', '12');
  await page.click('form.invoke button[type=submit]');
  const error = page.locator('.field[data-pointer="/passenger_count"] > .error');
  await error.filter({ hasText: /./ }).waitFor();
  assert.equal(await error.textContent(), 'must be <= 9, got 12');
  assert.equal(await page.locator('.field[data-pointer="/origin"] > .error').textContent(), '');
  assert.match(await page.locator('.reply').textContent(), /not sent: 1 problem/);
  assert.equal(await page.evaluate(() => document.activeElement.id), 'f/passenger_count', 'the field to fix has the focus');
  page.off('request', watch);
  assert.deepEqual(invokes, [], 'nothing was sent');
  // The server says the same words when it is asked directly.
  const direct = await call('POST', '/agents/flight-booking/invoke', { origin: 'PEK', destination: 'SHA',
    departure_date: '2026-05-04', passenger_count: 12 }, clientKey);
  assert.equal(direct.status, 400);
  assert.deepEqual(direct.body.error.details.violations.map((v) => [v.instanceLocation, v.message]),
    [['/passenger_count', 'must be <= 9, got 12']]);
  await page.screenshot({ path: join(shots, 'agent-violation.png'), fullPage: true });
});

test('a streamed reply is shown event by event as it arrives', async () => {
  await page.goto(`${base}/ui/#/agents/fight-comparison`);
  await page.waitForSelector('[id="f/a"]');
  await page.fill('[id="f/a"]', 'a bear');
  await page.fill('[id="f/b"]', 'a shark');
  await page.check('form.invoke .stream');
  await page.click('form.invoke button[type=submit]');
  await page.waitForSelector('.events li');
  // The judge sends a round every quarter second: the first is on the page before the verdict.
  const first = await page.locator('.events li').count();
  assert.ok(first < 4, `${first} events at the first look`);
  await page.waitForFunction(() => document.querySelectorAll('.events li').length === 4);
  const events = await page.locator('.events li strong').allTextContents();
  assert.deepEqual(events, ['round', 'round', 'round', 'result']);
  const verdict = JSON.parse(await page.locator('.events li >> nth=3').locator('pre').textContent());
  assert.ok(['a bear', 'a shark'].includes(verdict.winner), JSON.stringify(verdict));
  await page.screenshot({ path: join(shots, 'agent-streamed.png'), fullPage: true });
});

test('keyboard only, and a phone-width screen', async () => {
  await page.goto(`${base}/ui/#/`);
  await page.waitForSelector('#agents li');
  // From the top of the page, Tab reaches the search box; Enter searches.
  for (let i = 0; i < 15 && (await page.evaluate(() => document.activeElement?.id)) !== 'q'; i++) {
    await page.keyboard.press('Tab');
  }
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'q');
  await page.keyboard.type('fight between two contestants');
  await page.keyboard.press('Enter');
  await page.waitForSelector('#results a');
  assert.equal(await page.locator('#results a >> nth=0').textContent(), 'Fight comparison agent');

  const phone = await browser.newPage({ viewport: { width: 375, height: 740 }, isMobile: true });
  try {
    for (const [hash, ready] of [['#/', '#agents li'], ['#/agents/flight-booking', '[id="f/origin"]'],
      ['#/scenarios/flight_booking', '#template td'], ['#/status', '#route-stats td']]) {
      await phone.goto(`${base}/ui/${hash}`);
      await phone.waitForSelector(ready);
      const wide = await phone.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(wide <= 375, `${hash} is ${wide} px wide on a 375 px screen`);
      await phone.screenshot({ path: join(shots, `phone-${hash.replace(/[#/]+/g, '-').replace(/^-|-$/g, '') || 'discover'}.png`), fullPage: true });
    }
  } finally {
    await phone.close();
  }
});

test('page through the agent list', async () => {
  await page.goto(`${base}/ui/#/`);
  await page.waitForSelector('#agents li');
  assert.equal(await page.locator('#agents li').count(), 5);
  await page.click('#more');
  await page.waitForFunction(() => document.querySelectorAll('#agents li').length > 5);
  const all = await page.locator('#agents li a').allTextContents();
  assert.ok(all.includes('Helper 4') || all.length >= 7, `paged: ${all.join(', ')}`);
  assert.ok(!all.includes('Secret flight agent'));
  await page.screenshot({ path: join(shots, 'agents-paged.png'), fullPage: true });
});

test('scenario and status pages render', async () => {
  await page.goto(`${base}/ui/#/scenarios/flight_booking`);
  await page.waitForSelector('#template td');
  assert.ok((await page.locator('#template td').allTextContents()).includes('departure_date'));
  await page.screenshot({ path: join(shots, 'scenario.png'), fullPage: true });
  await page.goto(`${base}/ui/#/status`);
  await page.waitForSelector('text=health:');
  assert.match(await page.locator('main').textContent(), /health: ok/);
  // Request counts and latency percentiles per route, from /metrics, and rates over time once
  // two samples are in.
  await page.waitForSelector('#route-stats td');
  await page.waitForSelector('svg.rate-chart path');
  await page.waitForSelector('svg.latency-chart');
  const stats = await page.locator('#route-stats tr').allTextContents();
  const search = stats.find((row) => row.startsWith('/agents/search'));
  assert.ok(search, stats.join('\n'));
  assert.match(search, /ms/);
  await page.screenshot({ path: join(shots, 'status.png'), fullPage: true });
});

test('evolution: a payment key waits for an admin, who approves it in the console', async () => {
  // Six: heat (10 each) cools while they arrive, and must reach 50.
  for (let i = 0; i < 6; i++) {
    const r = await call('POST', '/scenarios/flight_booking/payloads', { schema_id: 'flight_booking_v1',
      client_id: `payer-${i}`, payload: { origin: 'PEK', destination: 'SHA', departure_date: '2026-05-04',
        other: 'pay with my credit card' } });
    assert.equal(r.status, 200);
  }
  let state;
  for (let i = 0; i < 100; i++) {
    state = (await call('GET', '/scenarios/flight_booking/evolution')).body;
    if (state.clusters.some((c) => c.state === 'awaiting_approval')) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.ok(state.clusters.some((c) => c.state === 'awaiting_approval'), JSON.stringify(state));
  await page.goto(`${base}/ui/`);
  await page.fill('#api-key', admin);
  await page.click('#key-form button');
  await page.goto(`${base}/ui/#/scenarios/flight_booking/evolution`);
  await page.waitForSelector('[data-approve]');
  // Each cluster's heat over time, against the trigger line.
  const heat = page.locator('[data-cluster] svg.heat-chart');
  assert.ok((await heat.count()) >= 1);
  assert.match(await heat.first().getAttribute('aria-label'), /over time: [\d.]+ now, trigger at 50/);
  assert.equal(await heat.first().locator('path').count(), 1);
  await page.screenshot({ path: join(shots, 'evolution-waiting.png'), fullPage: true });
  await page.click('[data-approve]');
  await page.waitForFunction(() => !document.querySelector('[data-approve]'));
  assert.match(await page.locator('main').textContent(), /patched/);
  await page.screenshot({ path: join(shots, 'evolution-approved.png'), fullPage: true });
  const updates = (await call('GET', '/scenarios/flight_booking/updates')).body;
  assert.equal(updates.patches.length, 1, 'the approved key is delivered');

  // With the admin key, the agent page lists its recent calls from the audit log: alice's booking
  // (200) and her refused passenger count (400).
  await page.goto(`${base}/ui/#/agents/flight-booking`);
  await page.waitForSelector('#recent-calls td');
  const cells = await page.locator('#recent-calls td').allTextContents();
  assert.ok(cells.includes('alice') && cells.includes('200') && cells.includes('400'), cells.join(' '));
  await page.screenshot({ path: join(shots, 'agent-recent-calls.png'), fullPage: true });
});
