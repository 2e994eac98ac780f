// Writes deterministic flight-booking payloads (about 1 in 5 invalid) as JSON Lines.
// Usage: node make_template_instances.mjs OUT.jsonl [COUNT]
import { writeFileSync } from 'node:fs';

const out = process.argv[2];
const count = Number(process.argv[3] ?? 1000);
let seed = 42;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const pick = (xs) => xs[Math.floor(rand() * xs.length)];
const airports = ['PEK', 'SHA', 'JFK', 'LHR', 'CDG', 'NRT', 'Beijing', 'Shanghai', 'Oslo'];
const cabins = ['economy', 'premium_economy', 'business', 'first'];

const lines = [];
for (let i = 0; i < count; ++i) {
  const p = {
    origin: pick(airports),
    destination: pick(airports),
    departure_date: `2026-${String(1 + Math.floor(rand() * 12)).padStart(2, '0')}-${String(1 + Math.floor(rand() * 28)).padStart(2, '0')}`,
  };
  if (rand() < 0.7) p.cabin_class = pick(cabins);
  if (rand() < 0.6) p.passenger_count = 1 + Math.floor(rand() * 9);
  if (rand() < 0.3) p.other = pick(['window seat', 'vegetarian meal', 'extra legroom', '']);
  switch (i % 5 === 4 ? Math.floor(rand() * 4) : -1) {
    case 0: delete p.origin; break;
    case 1: p.passenger_count = 12; break;
    case 2: p.cabin_class = 'luxury'; break;
    case 3: p.seat = 'window'; break;
  }
  lines.push(JSON.stringify(p));
}
writeFileSync(out, lines.join('\n') + '\n');
