/** Waits for SIGINT or SIGTERM, then runs `stop` once; a second signal exits at once. */
export function runUntilSignal(stop: () => Promise<void>): Promise<void> {
  return new Promise((resolve, reject) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) {
        console.error(`${signal} again: exiting without a clean stop`);
        process.exit(1);
      }
      stopping = true;
      stop().then(resolve, reject);
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
  });
}
