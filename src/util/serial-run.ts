// One job that must never run twice at once and must not miss a request: run() starts it, or, while it runs,
// marks it to run once more when it ends (any number of requests meanwhile make one more run).
export class SerialRun {
  private running: Promise<void> | undefined;
  private again = false;

  constructor(
    private readonly job: () => Promise<void>,
    private readonly enabled: () => boolean = () => true,
  ) {}

  run(): void {
    if (!this.enabled()) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.job().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.run();
      }
    });
  }

  /** Resolves once no run is going on or asked for. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }
}
