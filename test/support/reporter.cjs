// Mocha's spec reporter, plus one closing line in the plain form CI reads: "tests: N passed, N failed, N skipped".
'use strict';
const Mocha = require('mocha');

class SpecWithSummary extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
      const s = runner.stats ?? { passes: 0, failures: 0, pending: 0 };
      process.stdout.write(`\ntests: ${s.passes} passed, ${s.failures} failed, ${s.pending} skipped\n`);
    });
  }
}

module.exports = SpecWithSummary;
