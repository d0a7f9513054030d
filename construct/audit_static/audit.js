// The audit page: one candidate at a time, every action on a key. Verdicts are saved by the server
// (committed, attributed to the auditor) before the page says "saved"; a reload shows them again.
"use strict";

const $ = (sel) => document.querySelector(sel);
const state = { auditor: "", list: [], index: 0, current: null, labels: [], labelsEdited: false, pending: null };

async function api(path, body) {
  const response = await fetch("/audit/api/" + path, body === undefined ? {} :
    { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  const data = await response.json();
  if (!response.ok) throw new Error(data.error || response.statusText);
  return data;
}

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  Object.assign(node, props);
  for (const child of children) node.append(child);
  return node;
}

function status(text, kind = "") { const s = $("#status"); s.textContent = text; s.className = kind; }

async function loadList() {
  state.list = (await api("candidates")).candidates;
  const list = $("#list");
  list.replaceChildren(...state.list.map((c, i) => {
    const li = el("li", { textContent: `${c.cell} ${c.id}`, className: c.verdict || "" });
    li.dataset.id = c.id;
    li.addEventListener("click", () => show(i));
    return li;
  }));
  const done = state.list.filter((c) => c.verdict).length;
  $("#list-caption").textContent = `Candidates: ${done} of ${state.list.length} reviewed`;
}

function titleOf(pid) {
  const c = state.current;
  return [c.seed, c.bridge, ...c.targets].find((p) => p && p.id === pid)?.title || pid;
}

function renderLabels() {
  const c = state.current;
  const rows = state.labels.map((lab, i) => {
    const paper = el("select", { className: "paper", ariaLabel: `label ${i + 1} paper` },
      ...c.targets.map((t) => el("option", { value: t.id, textContent: t.title, selected: t.id === lab.paper_id })));
    const headers = c.targets.find((t) => t.id === lab.paper_id)?.headers || [];
    const section = el("select", { className: "section", ariaLabel: `label ${i + 1} section` },
      ...headers.map((h) => el("option", { value: h, textContent: h, selected: h === lab.section })));
    if (!headers.includes(lab.section)) section.prepend(el("option", { value: lab.section, textContent: `${lab.section} (names no header)`, selected: true }));
    const relevance = el("select", { className: "relevance", ariaLabel: `label ${i + 1} relevance` },
      ...["direct", "supporting"].map((r) => el("option", { value: r, textContent: r, selected: r === lab.relevance })));
    const remove = el("button", { type: "button", textContent: "Remove label" });
    const edited = () => { state.labelsEdited = true; };
    paper.addEventListener("change", () => { lab.paper_id = paper.value; lab.section = (c.targets.find((t) => t.id === paper.value)?.headers || [""])[0]; edited(); renderLabels(); });
    section.addEventListener("change", () => { lab.section = section.value; edited(); });
    relevance.addEventListener("change", () => { lab.relevance = relevance.value; edited(); });
    remove.addEventListener("click", () => { state.labels.splice(i, 1); edited(); renderLabels(); });
    return el("tr", {}, el("td", {}, paper), el("td", {}, section), el("td", {}, relevance), el("td", {}, remove));
  });
  $("#labels tbody").replaceChildren(...rows);
}

function highlight(text, evidence) {
  const box = el("section");
  let rest = text;
  for (const e of evidence) {
    const at = rest.indexOf(e);
    if (at < 0) continue;
    box.append(rest.slice(0, at), el("mark", { textContent: e }));
    rest = rest.slice(at + e.length);
  }
  box.append(rest);
  return box;
}

async function show(index) {
  if (!state.list.length) return;
  state.index = Math.max(0, Math.min(index, state.list.length - 1));
  const c = await api("candidates/" + encodeURIComponent(state.list[state.index].id));
  state.current = c;
  state.labels = c.labels.map((l) => ({ ...l }));
  state.labelsEdited = false;
  state.pending = null;
  document.querySelectorAll("#list li").forEach((li, i) => li.classList.toggle("current", i === state.index));
  $("#where").textContent = `${c.id} · ${c.cell} · ${c.reasoning_type} · tier ${c.tier} · ${state.index + 1} of ${state.list.length}`;
  $("#question").textContent = c.question;
  $("#options").replaceChildren(...c.options.map((o, i) => el("li", { className: i === c.correct_index ? "gold" : "" },
    (i === c.correct_index ? "✓ " : "") + o, el("span", { className: "kind", textContent: c.distractor_types[i] }))));
  $("#evidence").textContent = c.evidence.join(" … ");
  const link = (p, role) => el("li", {}, `${role}: `, el("a", { href: "#paper/" + p.id, textContent: p.title, onclick: (ev) => { ev.preventDefault(); openPaper(p.id); } }));
  $("#papers").replaceChildren(link(c.seed, "seed"), ...(c.bridge ? [link(c.bridge, "bridge")] : []), ...c.targets.map((t) => link(t, "target")));
  renderLabels();
  $("#sections").replaceChildren(...c.sections.map((s) => el("div", {},
    el("h3", { textContent: `${s.section} — ${titleOf(s.paper_id)}`, className: s.resolved ? "" : "unresolved" }),
    s.resolved ? highlight(s.text, c.evidence) : el("p", { className: "unresolved", textContent: "This label names no section of the paper." }))));
  const mine = c.verdicts.find((v) => v.auditor === state.auditor);
  document.querySelectorAll("#axes input").forEach((box) => { box.checked = Boolean(mine?.axes[box.name]); });
  $("#note").value = mine?.note || "";
  $("#verdicts").replaceChildren(...c.verdicts.map((v) => el("li", { textContent: `${v.auditor}: ${v.verdict}${v.note ? " — " + v.note : ""}` })));
  status(mine ? `your verdict: ${mine.verdict}` : "not reviewed by you yet");
}

async function openPaper(pid) {
  const p = await api("papers/" + encodeURIComponent(pid));
  $("#paper-title").textContent = `${p.title} (${p.year ?? "no year"})`;
  $("#paper-body").replaceChildren(...p.sections.map((s) => el("div", {}, el("h3", { textContent: s.header }), el("p", { textContent: s.text }))));
  $("#paper-view").hidden = false;
}

async function save(verdict) {
  const axes = {};
  document.querySelectorAll("#axes input").forEach((box) => { axes[box.name] = box.checked; });
  const body = { candidate: state.current.id, auditor: state.auditor, verdict, axes, note: $("#note").value };
  if (state.labelsEdited) body.labels = state.labels;
  try {
    const result = await api("verdicts", body);
    await loadList();
    status(`saved: ${verdict} by ${state.auditor} (#${result.saved})`, "saved");
    if (state.index + 1 < state.list.length) await show(state.index + 1);
    else status(`saved: ${verdict} by ${state.auditor} (#${result.saved}); that was the last candidate`, "saved");
  } catch (err) {
    status(err.message, "error");
  }
}

function typing(target) { return ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName); }

document.addEventListener("keydown", (ev) => {
  if (!state.auditor || !state.current) return;
  if (ev.key === "Escape") { document.activeElement.blur(); return; }
  if (ev.target.id === "note" && ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) {
    ev.preventDefault();
    save(state.pending || "pass");
    return;
  }
  if (typing(ev.target) || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const axes = { "1": "well_formed", "2": "gold_supported", "3": "labels_accurate" };
  if (axes[ev.key]) { const box = document.querySelector(`#axes input[name=${axes[ev.key]}]`); box.checked = !box.checked; }
  else if (ev.key === "j" || ev.key === "ArrowRight") show(state.index + 1);
  else if (ev.key === "k" || ev.key === "ArrowLeft") show(state.index - 1);
  else if (ev.key === "p") save("pass");
  else if (ev.key === "r") save("remove");
  else if (ev.key === "f") { state.pending = "flag"; status("Flag: write a note, then Ctrl+Enter"); $("#note").focus(); }
  else if (ev.key === "n") $("#note").focus();
  else if (ev.key === "l") $("#labels select.section")?.focus();
  else return;
  ev.preventDefault();
});

document.querySelectorAll("#buttons button").forEach((b) => b.addEventListener("click", () => {
  if (b.dataset.verdict === "flag" && !$("#note").value.trim()) { state.pending = "flag"; $("#note").focus(); status("Flag: write a note, then Ctrl+Enter"); return; }
  save(b.dataset.verdict);
}));
$("#add-label").addEventListener("click", () => {
  const t = state.current.targets[0];
  state.labels.push({ paper_id: t.id, section: t.headers[0] || "", relevance: "supporting" });
  state.labelsEdited = true;
  renderLabels();
});
$("#close-paper").addEventListener("click", () => { $("#paper-view").hidden = true; });

$("#who").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const name = $("#auditor").value.trim();
  if (!name) return;
  state.auditor = name;
  localStorage.setItem("agenthop-auditor", name);
  $("#auditor").blur();
  $("#desk").hidden = false;
  await loadList();
  const first = state.list.findIndex((c) => !c.verdict);
  await show(first < 0 ? 0 : first);
});

$("#auditor").value = localStorage.getItem("agenthop-auditor") || "";
