export function closeTally(t) { if (t.status !== 'open') throw new Error('closed'); t.status = 'closed'; }
