import { readFileSync } from 'node:fs';
import * as a from './src/index.js';
const text = readFileSync(process.argv[2], 'utf8');
const which = process.argv[3];
try {
  if (which === 'plan') (a as any).planReport({ path: 't.allium', text });
  else if (which === 'model') (a as any).modelReport({ path: 't.allium', text });
  else (a as any).checkReports([{ path: 't.allium', text }], which);
  console.log('ok');
} catch (e) { console.log((e as Error).stack?.split('\n').slice(0, 14).join('\n')); }
