// Prints "<16 hex digits of the IEEE-754 bits> <String(x)>" for `count` finite doubles, as
// ECMAScript's Number.prototype.toString formats them. Deterministic for a given seed.
// Usage: node number_oracle.mjs COUNT SEED
const count = Number(process.argv[2] ?? 1000000);
let state = BigInt.asUintN(64, BigInt(process.argv[3] ?? 1) * 0x9e3779b97f4a7c15n + 1n);

function next64() {  // xorshift64*
  state ^= state >> 12n;
  state ^= BigInt.asUintN(64, state << 25n);
  state ^= state >> 27n;
  return BigInt.asUintN(64, state * 0x2545f4914f6cdd1dn);
}
const unit = () => Number(next64() >> 11n) / 2 ** 53;

const view = new DataView(new ArrayBuffer(8));
const fromBits = (b) => { view.setBigUint64(0, b); return view.getFloat64(0); };
const toBits = (x) => { view.setFloat64(0, x); return view.getBigUint64(0); };

function sample(i) {
  switch (i % 10) {
    case 0: case 1: case 2: case 3:  // any bit pattern: every exponent, subnormals, signs
      return fromBits(next64());
    case 4: case 5:  // integers of every size up to 10^22
      return Math.floor(unit() * 10 ** Math.floor(unit() * 23));
    case 6: case 7:  // decimals across the fixed/exponent boundaries
      return (unit() - 0.5) * 10 ** (Math.floor(unit() * 60) - 30);
    case 8: {  // short decimal literals, as people write them
      const digits = Math.floor(unit() * 1e6);
      return Number(`${digits}e${Math.floor(unit() * 60) - 35}`);
    }
    default: {  // one ulp around powers of ten
      const p = Number(`1e${Math.floor(unit() * 640) - 323}`);
      const step = BigInt(Math.floor(unit() * 3)) - 1n;
      return fromBits(BigInt.asUintN(64, toBits(p) + step));
    }
  }
}

const out = [];
let made = 0;
for (let i = 0; made < count; ++i) {
  const x = sample(i);
  if (!Number.isFinite(x)) continue;
  out.push(toBits(x).toString(16).padStart(16, '0') + ' ' + String(x));
  ++made;
  if (out.length === 65536) { process.stdout.write(out.join('\n') + '\n'); out.length = 0; }
}
if (out.length) process.stdout.write(out.join('\n') + '\n');
