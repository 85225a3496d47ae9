import { readFileSync } from 'node:fs';
const ok = readFileSync(new URL('../src/tally.js', import.meta.url), 'utf8').includes("'closed'; }");
console.log(ok ? 'ok 1 - closes' : 'not ok 1 - closes');
console.log('1..1');
console.log(ok ? '# pass 1' : '# pass 0');
console.log(ok ? '# fail 0' : '# fail 1');
