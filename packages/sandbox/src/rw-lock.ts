/**
 * Readers-writer lock, FIFO: file operations share a sandbox, structural changes (freezing its
 * layer for a child, discarding it) need it alone, since they restart or remove its mount.
 */
export class RwLock {
  private readers = 0;
  private writer = false;
  private readonly waiting: Array<{ exclusive: boolean; grant: () => void }> = [];

  async shared<T>(fn: () => Promise<T>): Promise<T> {
    await this.acquire(false);
    try {
      return await fn();
    } finally {
      this.readers--;
      this.pump();
    }
  }

  async exclusive<T>(fn: () => Promise<T>): Promise<T> {
    await this.acquire(true);
    try {
      return await fn();
    } finally {
      this.writer = false;
      this.pump();
    }
  }

  private acquire(exclusive: boolean): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.push({ exclusive, grant: resolve });
      this.pump();
    });
  }

  private pump(): void {
    while (this.waiting.length > 0 && !this.writer) {
      const next = this.waiting[0];
      if (next.exclusive) {
        if (this.readers > 0) return;
        this.writer = true;
      } else {
        this.readers++;
      }
      this.waiting.shift();
      next.grant();
    }
  }
}
