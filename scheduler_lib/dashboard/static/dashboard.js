// The dashboard's only script (no inline script: the CSP forbids it). It switches the job
// editor's tabs, previews the next runs as the user types, asks before deleting, and
// ticks every job of a list at once.
"use strict";

(function () {
  const token = document.querySelector('meta[name="csrf-token"]')?.content || "";

  document.querySelectorAll("form[data-confirm]").forEach((form) => {
    form.addEventListener("submit", (event) => {
      if (!window.confirm(form.dataset.confirm)) event.preventDefault();
    });
  });

  // "Select all shown" ticks every row's box (the server also reads it without a script).
  document.querySelectorAll("input[data-select-all]").forEach((all) => {
    all.addEventListener("change", () => {
      document.querySelectorAll(`input[name=job][form="${all.getAttribute("form")}"]`)
        .forEach((box) => { box.checked = all.checked; });
    });
  });

  const preview = document.querySelector("aside[data-preview]");
  if (!preview) return;
  const panels = document.querySelectorAll("form.panel");
  const tabs = document.querySelectorAll("button.tab");
  let active = [...panels].find((p) => !p.hidden) || panels[0];

  // Switching editors carries the job over: the name, and from the form to the JSON editor
  // the job the form describes (as long as the JSON was not edited by hand).
  const jsonText = document.querySelector("#job-json textarea[name=json]");
  let jsonEdited = false;
  let formJson = "";
  jsonText?.addEventListener("input", () => { jsonEdited = true; });

  tabs.forEach((tab) => {
    tab.addEventListener("click", () => {
      const name = active.querySelector("input[name=name]")?.value;
      tabs.forEach((t) => t.setAttribute("aria-selected", String(t === tab)));
      panels.forEach((p) => { p.hidden = p.dataset.panel !== tab.dataset.tab; });
      active = [...panels].find((p) => !p.hidden);
      const nameField = active.querySelector("input[name=name]");
      if (nameField && name !== undefined) nameField.value = name;
      if (active.dataset.panel === "json" && !jsonEdited && formJson && jsonText) {
        jsonText.value = formJson;
      }
      schedule();
    });
  });

  let timer = null;
  let sequence = 0;
  function schedule() {
    clearTimeout(timer);
    timer = setTimeout(run, 250);
  }

  async function run() {
    const mine = ++sequence;
    const body = new URLSearchParams(new FormData(active));
    let answer;
    try {
      const response = await fetch(preview.dataset.preview, {
        method: "POST",
        headers: { "X-CSRF-Token": token, "Content-Type": "application/x-www-form-urlencoded" },
        body,
        credentials: "same-origin",
      });
      answer = await response.json();
    } catch (error) {
      answer = { executions: [], errors: [{ message: "preview unavailable: " + error }] };
    }
    if (mine !== sequence) return; // a newer keystroke's answer wins
    if (active.dataset.panel === "form" && answer.json) formJson = answer.json;
    show(answer);
  }

  function show(answer) {
    const runs = document.getElementById("preview-runs");
    const errors = document.getElementById("preview-errors");
    runs.replaceChildren(...(answer.executions || []).map((at, index) => {
      const item = document.createElement("li");
      // with jitter, the server's label says the jittered start and its offset
      item.textContent = answer.labels ? answer.labels[index] : at.replace("T", " ").replace("Z", " UTC");
      return item;
    }));
    const problems = answer.errors || (answer.error ? [answer.error] : []);
    errors.hidden = problems.length === 0;
    errors.textContent = problems.map((e) => e.text || e.message).join("\n");
    document.getElementById("preview-words").textContent = answer.words ? "Runs " + answer.words + "." : "";
    document.getElementById("preview-end").textContent = answer.endReason || "";
    document.getElementById("preview-jitter").textContent = answer.jitterNote || "";
  }

  panels.forEach((panel) => panel.addEventListener("input", schedule));
  panels.forEach((panel) => panel.addEventListener("change", schedule));
  run();
})();
