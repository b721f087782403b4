#!/usr/bin/env node
// Validates Kubernetes manifests against the official Kubernetes OpenAPI schemas, compiled into
// JSON-schema validators by the npm package kubernetes-models (pinned in package.json /
// package-lock.json next to this file): value types, required fields, enums and formats (ports,
// quantities, int-or-string, ...). Unknown fields are checked by k8s_strict.py.
//
//   node validate-k8s.js [--partial] FILE.yaml ...      ('-' reads stdin)
//
// --partial: strategic merge patches (overlays), which are not whole objects: only apiVersion,
// kind and metadata.name are required and schema errors about missing required fields are ignored.
// Exit status 1 when any document is invalid.
"use strict";
const fs = require("fs");
const path = require("path");
const YAML = require("yaml");

// apiVersion -> kubernetes-models module directory
function modulePath(apiVersion, kind) {
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
  if (!group) return `kubernetes-models/${version}/${kind}`;
  // core groups without a domain live under their bare name (apps, batch, policy, autoscaling)
  return `kubernetes-models/${group}/${version}/${kind}`;
}

function loadModel(apiVersion, kind) {
  try {
    const mod = require(modulePath(apiVersion, kind));
    return mod[kind] || null;
  } catch (e) {
    if (e.code === "MODULE_NOT_FOUND") return null;
    throw e;
  }
}

const args = process.argv.slice(2);
const partial = args.includes("--partial");
const files = args.filter((a) => a !== "--partial");
if (files.length === 0) {
  console.error("usage: validate-k8s.js [--partial] FILE.yaml ...");
  process.exit(2);
}

let checked = 0;
let failed = 0;
for (const file of files) {
  const text = file === "-" ? fs.readFileSync(0, "utf8") : fs.readFileSync(file, "utf8");
  const docs = YAML.parseAllDocuments(text);
  docs.forEach((doc, i) => {
    const where = `${file === "-" ? "-" : path.relative(process.cwd(), file)}#${i}`;
    if (doc.errors && doc.errors.length) {
      console.log(`${where}: YAML error: ${doc.errors[0].message}`);
      failed++;
      return;
    }
    const obj = doc.toJS();
    if (obj === null || obj === undefined) return;
    checked++;
    if (typeof obj !== "object" || !obj.apiVersion || !obj.kind) {
      console.log(`${where}: not a Kubernetes object (apiVersion and kind are required)`);
      failed++;
      return;
    }
    const name = (obj.metadata && obj.metadata.name) || "?";
    const Model = loadModel(obj.apiVersion, obj.kind);
    if (!Model) {
      console.log(`${where}: unknown apiVersion/kind ${obj.apiVersion} ${obj.kind}`);
      failed++;
      return;
    }
    if (!obj.metadata || !obj.metadata.name) {
      console.log(`${where} (${obj.kind}/${name}): metadata.name is required`);
      failed++;
      return;
    }
    try {
      new Model(obj).validate();
    } catch (e) {
      const errors = (e.errors || [{ message: e.message }]).filter(
        (err) => !(partial && err.keyword === "required"));
      if (errors.length) {
        for (const err of errors) {
          const at = err.instancePath !== undefined ? `${err.instancePath || "/"} ` : "";
          const extra = err.params && err.params.allowedValues ? ` (${err.params.allowedValues.join(", ")})` : "";
          console.log(`${where} (${obj.kind}/${name}): ${at}${err.message}${extra}`);
        }
        failed++;
      }
    }
  });
}
console.log(`validate-k8s: ${checked} object(s) checked, ${failed} invalid`);
process.exit(failed ? 1 : 0);
