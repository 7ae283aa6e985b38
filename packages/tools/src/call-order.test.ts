import { describe, expect, it } from 'vitest';
import { CallOrder, type CallAccess, type CallTurn } from './call-order.js';

/**
 * Every promise callback that can run has run: a macrotask boundary. The order involves only
 * promises (no I/O, no timers), so after this a `ready` still pending is really held back.
 */
const flushed = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Turns with their readiness observable, and a log of when each became ready. */
function line(order: CallOrder) {
  const log: string[] = [];
  const started = new Set<string>();
  const turns = new Map<string, CallTurn>();
  const enter = (id: string, access: CallAccess, threadId = 't1'): CallTurn => {
    const turn = order.enter(threadId, id, access);
    turns.set(id, turn);
    void turn.ready.then((go) => {
      log.push(go ? `${id} starts` : `${id} withdrawn`);
      if (go) started.add(id);
    });
    return turn;
  };
  const leave = (id: string): void => {
    log.push(`${id} leaves`);
    turns.get(id)!.leave();
  };
  return { log, started, enter, leave };
}

describe('CallOrder', () => {
  it('starts reads together, a write alone after them, and later reads after the write', async () => {
    const order = new CallOrder();
    const { log, started, enter, leave } = line(order);
    enter('r1', 'read');
    enter('r2', 'read');
    enter('w3', 'write');
    enter('r4', 'read');
    enter('r5', 'read');
    await flushed();
    // Both reads run at the same time: each started before either left.
    expect([...started]).toEqual(['r1', 'r2']);
    leave('r1');
    await flushed();
    expect([...started]).toEqual(['r1', 'r2']);
    leave('r2');
    await flushed();
    expect([...started]).toEqual(['r1', 'r2', 'w3']);
    leave('w3');
    await flushed();
    expect(log).toEqual(['r1 starts', 'r2 starts', 'r1 leaves', 'r2 leaves', 'w3 starts', 'w3 leaves', 'r4 starts', 'r5 starts']);
    leave('r4');
    leave('r5');
    expect(order.size).toBe(0);
  });

  it('runs writes one at a time, in dispatch order', async () => {
    const order = new CallOrder();
    const { log, enter, leave } = line(order);
    enter('w1', 'write');
    enter('w2', 'write');
    enter('w3', 'write');
    await flushed();
    leave('w1');
    await flushed();
    leave('w2');
    await flushed();
    leave('w3');
    expect(log).toEqual(['w1 starts', 'w1 leaves', 'w2 starts', 'w2 leaves', 'w3 starts', 'w3 leaves']);
    expect(order.size).toBe(0);
  });

  it('starts a command after earlier writes but not after reads, and lets nothing wait for a command', async () => {
    const order = new CallOrder();
    const { started, enter, leave } = line(order);
    enter('r1', 'read');
    enter('w2', 'write');
    enter('c3', 'command');
    enter('c4', 'command');
    await flushed();
    expect([...started]).toEqual(['r1']);
    leave('r1');
    await flushed();
    expect([...started]).toEqual(['r1', 'w2']);
    leave('w2');
    await flushed();
    expect([...started]).toEqual(['r1', 'w2', 'c3', 'c4']);
    // The commands have not left (they run on); later file calls don't wait for them.
    enter('w5', 'write');
    enter('r6', 'read');
    await flushed();
    expect(started.has('w5')).toBe(true);
    leave('w5');
    await flushed();
    expect(started.has('r6')).toBe(true);
    for (const id of ['c3', 'c4', 'r6']) leave(id);
    expect(order.size).toBe(0);
  });

  it('never makes one thread wait for another', async () => {
    const order = new CallOrder();
    const { started, enter, leave } = line(order);
    enter('w1', 'write', 'thread-a');
    enter('r2', 'read', 'thread-a');
    enter('r3', 'read', 'thread-b');
    enter('w4', 'write', 'thread-b');
    enter('c5', 'command', 'thread-c');
    await flushed();
    expect([...started].sort()).toEqual(['c5', 'r3', 'w1']);
    expect(order.size).toBe(3);
    leave('r3');
    await flushed();
    expect(started.has('w4')).toBe(true);
    expect(started.has('r2')).toBe(false);
    for (const id of ['w4', 'c5', 'w1']) leave(id);
    await flushed();
    expect(started.has('r2')).toBe(true);
    expect(order.size).toBe(1);
    leave('r2');
    expect(order.size).toBe(0);
  });

  it('withdraws a waiting call at once, and the calls after it still wait for their own conflicts', async () => {
    const order = new CallOrder();
    const { log, started, enter, leave } = line(order);
    enter('w1', 'write');
    enter('w2', 'write');
    enter('r3', 'read');
    enter('c4', 'command');
    await flushed();
    expect(order.withdraw('t1', 'w1')).toBe(false); // already running: it runs to its end
    expect(order.withdraw('t1', 'w2')).toBe(true);
    expect(order.withdraw('t1', 'w2')).toBe(false);
    expect(order.withdraw('t1', 'nobody')).toBe(false);
    expect(order.withdraw('other-thread', 'w1')).toBe(false);
    expect(order.withdraw('t1', 'c4')).toBe(true);
    await flushed();
    expect([...started]).toEqual(['w1']);
    leave('w1');
    await flushed();
    expect(log).toEqual(['w1 starts', 'w2 withdrawn', 'c4 withdrawn', 'w1 leaves', 'r3 starts']);
    leave('r3');
    expect(order.size).toBe(0);
  });

  it('treats leaving before the turn came as a withdrawal, and leaving twice as once', async () => {
    const order = new CallOrder();
    const { log, enter, leave } = line(order);
    enter('w1', 'write');
    const c2 = enter('c2', 'command');
    enter('w3', 'write');
    await flushed();
    // A command refused before it waited gives up its place: nobody hangs on its `ready`.
    leave('c2');
    expect(await c2.ready).toBe(false);
    leave('w1');
    leave('w1');
    await flushed();
    expect(log).toEqual(['w1 starts', 'c2 leaves', 'c2 withdrawn', 'w1 leaves', 'w1 leaves', 'w3 starts']);
    leave('w3');
    expect(order.size).toBe(0);
  });

  it('holds nothing for a thread once its calls are over', async () => {
    const order = new CallOrder();
    expect(order.size).toBe(0);
    const a = order.enter('t1', 'a', 'read');
    expect(order.size).toBe(1);
    expect(await a.ready).toBe(true);
    a.leave();
    expect(order.size).toBe(0);
    const b = order.enter('t1', 'b', 'write');
    order.enter('t1', 'c', 'write');
    expect(order.withdraw('t1', 'c')).toBe(true);
    b.leave();
    expect(order.size).toBe(0);
  });
});
