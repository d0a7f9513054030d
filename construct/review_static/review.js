// The review page: one candidate at a time, every action on a key. Verdicts are saved by the server
// (committed, attributed to the auditor) before the page says "saved"; a reload shows them again.
// Edits not yet given a verdict (note, axes, labels) are a draft kept in this browser, so neither j/k nor a reload
// loses them. Text from the corpus is inserted as text only (AgentHopDOM.el).
"use strict";

const { byId: $, el, isTyping, helpPanel, plural } = window.AgentHopDOM;
// These browser-storage keys keep the names they had when this page had its old name, so that a name, a filter and
// unsaved drafts stored then are still found.
const NAME_KEY = "agenthop-auditor";
const FILTER_KEY = "agenthop-audit-filter";
const AXES = { 1: "well_formed", 2: "gold_supported", 3: "labels_accurate" };
// The keys that act on the candidate on screen (a verdict, an axis, a move, an undo).
const CANDIDATE_KEYS = new Set(["j", "k", "p", "r", "f", "u", "ArrowLeft", "ArrowRight"]);
const MARKS = { pass: "✓ pass", flag: "⚑ flag", remove: "✗ remove" };
const FILTERS = {
  all: () => true,
  mine: (c) => !c.by[state.auditor],
  unreviewed: (c) => !c.verdict,
  flagged: (c) => c.verdict === "flag",
  removed: (c) => c.verdict === "remove",
  disagreed: (c) => new Set(Object.values(c.by)).size > 1,
};

const state = {
  auditor: "", list: [], current: null, saved: null, labels: [], labelsEdited: false,
  pendingFlag: false, leaveAsked: null, busy: false, loading: 0,
  rated: new Set(),  // the quality axes the auditor set on this candidate: the others are saved as not rated
  savedFor: null,  // the candidate the "Saved" line is about
  ignored: [],  // keys pressed while a verdict was being saved or a candidate loading: never applied, but said
};
const papers = new Map();  // paper ID -> its sections, for the text of a label the auditor repointed
let sectionsDrawn = 0;  // each drawing of the labelled sections; a slower, older one is not shown over a newer one
let help = null;

async function api(path, body) {
  let response;
  try {
    response = await fetch("/review/api/" + path, body === undefined ? {} :
      { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  } catch (_) {
    throw new Error(`cannot reach the review server at ${location.host}: is 'agenthop-construct review' still running? `
      + "Your unsaved edits are kept in this browser.");
  }
  let data = null;
  try { data = await response.json(); } catch (_) { data = null; }
  if (!response.ok) throw new Error((data && data.error) || `the server answered ${response.status}`);
  return data;
}

function showProblem(text) {
  $("problem").textContent = text || "";
  $("problem").hidden = !text;
}

function setSaved(text, kind, cid) {
  const box = $("saved");
  box.textContent = text;
  box.className = `saved ${kind || ""}`.trim();
  state.savedFor = text ? cid || null : null;
}

// A key that would act on a candidate while the last verdict is still being saved (or the next candidate loading)
// is not applied: queueing it would give a verdict to a candidate not yet on screen. Saying so keeps nothing silent.
function ignoreKey(key) {
  state.ignored.push(key);
  const why = state.busy ? "a verdict was being saved" : "the next candidate was loading";
  const n = state.ignored.length;
  $("ignored").textContent = `${n === 1 ? "1 key" : `${n} keys`} (${state.ignored.join(" ")}) pressed while ${why}: `
    + `not applied, no verdict given by ${n === 1 ? "it" : "them"}. Press again once the candidate shows.`;
  $("ignored").hidden = false;
}

function clearIgnored() {
  state.ignored = [];
  $("ignored").textContent = "";
  $("ignored").hidden = true;
}

// --- the auditor's name ---------------------------------------------------------------------------------

function askName(why) {
  state.auditor = "";
  state.current = null;
  $("desk").hidden = true;
  $("me").hidden = true;
  $("where").textContent = "";
  $("progress").textContent = "";
  $("who").hidden = false;
  if (why) $("who-text").textContent = why;
  $("auditor").value = localStorage.getItem(NAME_KEY) || "";
  $("auditor").focus();
}

async function signIn(name) {
  state.auditor = name;
  localStorage.setItem(NAME_KEY, name);
  $("who").hidden = true;
  $("me-name").textContent = name;
  $("me").hidden = false;
  $("desk").hidden = false;
  $("filter").value = FILTERS[localStorage.getItem(FILTER_KEY)] ? localStorage.getItem(FILTER_KEY) : "all";
  try {
    await loadList();
  } catch (err) { showProblem(`Cannot list the candidates: ${err.message}`); return; }
  const wanted = routeId();
  const start = wanted && state.list.some((c) => c.id === wanted) ? wanted : firstOpen();
  if (start) await open(start);
  else showNothing("There are no candidates to review.");
}

// No candidate on screen (none at all, or none the filter shows): no verdict control is left that could act.
function showNothing(text) {
  state.current = null;
  ++state.loading;  // a candidate still loading is not shown over this
  $("nothing").textContent = text;
  $("nothing").hidden = false;
  $("shown").hidden = true;
  $("verdict").hidden = true;
  $("where").textContent = "";
  document.title = "AgentHop review";
  renderList();
}

function firstOpen() {
  const mine = state.list.find((c) => !c.by[state.auditor]);
  return (mine || state.list[0] || {}).id;
}

// --- the list, the filter and the progress --------------------------------------------------------------

async function loadList() {
  state.list = (await api("candidates")).candidates;
  renderList();
}

function shown() { return state.list.filter(FILTERS[$("filter").value] || FILTERS.all); }

// A new filter: the candidate on screen stays if the filter shows it, else the filter's first one opens
// (the edits left behind stay as a draft), or nothing is shown when the filter shows none.
function filterChanged() {
  localStorage.setItem(FILTER_KEY, $("filter").value);
  renderList();
  const visible = shown();
  const currentId = state.current ? state.current.id : null;
  if (currentId && visible.some((c) => c.id === currentId)) return;
  if (visible.length) { go(visible[0].id); return; }
  const label = $("filter").selectedOptions[0].textContent;
  showNothing(`No candidate in this view (${label}). Press v to choose another filter.`);
}

function draftKey(cid) { return `agenthop-audit-draft:${state.auditor}:${cid}`; }

function hasDraft(cid) { return localStorage.getItem(draftKey(cid)) !== null; }

function renderList() {
  const visible = shown();
  const currentId = state.current && state.current.id;
  $("list").replaceChildren(...visible.map((c) => {
    const draft = hasDraft(c.id);
    const mark = draft ? "✎ draft" : MARKS[c.verdict] || "";
    const link = el("a", { href: `#c=${encodeURIComponent(c.id)}`, "aria-current": c.id === currentId ? "true" : null,
                           title: c.question },
      el("span", { class: "id", text: `${c.cell} ${c.id}` }), el("span", { class: "mark", text: mark }));
    return el("li", { class: [c.verdict || "", draft ? "draft" : ""].join(" ").trim() || null, "data-id": c.id }, link);
  }));
  const done = state.list.filter((c) => c.verdict).length;
  $("list-caption").textContent = `Candidates: ${done} of ${state.list.length} reviewed`;
  const filter = $("filter");
  $("list-count").textContent = filter.value === "all" ? `All ${plural(state.list.length, "candidate")}`
    : `${visible.length} of ${state.list.length} shown (${filter.selectedOptions[0].textContent})`;
  renderProgress();
  const current = document.querySelector("#list a[aria-current=true]");
  if (current) current.scrollIntoView({ block: "nearest" });
}

function renderProgress() {
  const mine = state.list.map((c) => c.by[state.auditor]).filter(Boolean);
  const all = state.list.map((c) => c.verdict).filter(Boolean);
  const count = (list, v) => list.filter((x) => x === v).length;
  const disagreed = state.list.filter(FILTERS.disagreed).length;
  $("progress").textContent = `You: ${mine.length} reviewed, ${count(mine, "flag")} flagged, ${count(mine, "remove")} removed · `
    + `Everyone: ${all.length} of ${state.list.length} reviewed, ${count(all, "flag")} flagged, ${count(all, "remove")} removed, `
    + `${disagreed} disagreed`;
}

// The candidate after (or before) the current one among those the filter shows, in list order; wraps around.
function neighbour(step) {
  const order = state.list.map((c) => c.id);
  const at = state.current ? order.indexOf(state.current.id) : -1;
  const visible = new Set(shown().map((c) => c.id));
  for (let i = 1; i <= order.length; i += 1) {
    const id = order[(at + step * i + order.length * (i + 1)) % order.length];
    if (visible.has(id) && id !== (state.current && state.current.id)) return id;
  }
  return null;
}

// --- one candidate ----------------------------------------------------------------------------------------

function routeId() {
  const m = location.hash.match(/^#c=(.+)$/);
  return m ? decodeURIComponent(m[1]) : null;
}

// Opened at once (not through a hashchange a task later, when a quick key would still act on the old candidate);
// render() then puts the candidate in the address, so a reload comes back to it.
function go(cid) { open(cid); }

async function open(cid) {
  const token = ++state.loading;
  state.current = null;  // no verdict key acts while the candidate is loading
  let c;
  try {
    c = await api("candidates/" + encodeURIComponent(cid));
  } catch (err) { showProblem(`Cannot show ${cid}: ${err.message}`); return; }
  if (token !== state.loading) return;  // a later navigation won
  showProblem("");
  render(c);
  $("candidate").scrollTop = 0;
  $("candidate").focus({ preventScroll: true });
}

function titleOf(c, pid) {
  return [c.seed, c.bridge, ...c.targets].find((p) => p && p.id === pid)?.title || pid;
}

function render(c) {
  const mine = c.verdicts.find((v) => v.auditor === state.auditor) || null;
  state.current = c;
  $("nothing").hidden = true;
  $("shown").hidden = false;
  $("verdict").hidden = false;
  state.saved = { axes: { ...(mine ? mine.axes : {}) }, note: mine ? mine.note : "" };
  state.labels = c.labels.map((l) => ({ ...l }));
  state.labelsEdited = false;
  state.pendingFlag = false;
  state.leaveAsked = null;
  const order = state.list.findIndex((x) => x.id === c.id);
  if (routeId() !== c.id) history.replaceState(null, "", `#c=${encodeURIComponent(c.id)}`);  // a reload comes back here
  $("where").textContent = `${c.id} · ${order + 1} of ${state.list.length}`;
  $("meta").textContent = `${c.id} · ${c.cell} · ${c.reasoning_type} · consensus tier ${c.tier}`;
  document.title = `${c.id} · AgentHop review`;
  $("question").textContent = c.question;
  $("options").replaceChildren(...c.options.map((o, i) => el("li", { class: i === c.correct_index ? "gold" : null },
    i === c.correct_index ? "✓ " : "", o, el("span", { class: "kind", text: c.distractor_types[i] }))));
  $("evidence").textContent = c.evidence.join(" … ");
  const paperLink = (p, role) => el("li", {}, `${role}: `,
    el("button", { type: "button", class: "link", onclick: () => openPaper(p.id) }, p.title || p.id));
  // replaceChildren would show a null as the text "null": a depth-1 chain has no bridge, so it is left out.
  $("papers").replaceChildren(...[paperLink(c.seed, "seed"), c.bridge ? paperLink(c.bridge, "bridge") : null,
    ...c.targets.map((t) => paperLink(t, "target"))].filter(Boolean));
  $("verdicts").replaceChildren(...(c.verdicts.length ? c.verdicts.map((v) => el("li", {},
    el("strong", { text: v.auditor }), `: ${v.verdict}${v.note ? ` (${v.note})` : ""}`)) : [el("li", { text: "none yet" })]));
  $("mine").textContent = mine ? `You gave: ${mine.verdict}` : "Not reviewed by you yet.";
  setFields(state.saved.axes, state.saved.note);
  const draft = readDraft(c.id);
  if (draft) {
    setFields(draft.axes, draft.note);
    if (draft.labels) { state.labels = draft.labels; state.labelsEdited = true; }
  }
  renderLabels();
  renderSections();
  showDraft();
  renderList();
}

// An axis not set by the auditor is shown as mixed (a dash) and saved as not rated, never as false.
function setFields(axes, note) {
  state.rated = new Set(Object.keys(axes || {}));
  document.querySelectorAll("#axes input").forEach((box) => {
    box.checked = Boolean(axes[box.name]);
    box.indeterminate = !state.rated.has(box.name);
  });
  $("note").value = note || "";
}

function rate(box) {
  box.indeterminate = false;
  state.rated.add(box.name);
  edited();
}

// The text of each label as it is now, repointed labels included: the server's for a label it resolved, else the
// paper's section of that exact header (the section menu offers only the paper's headers).
async function renderSections() {
  const c = state.current;
  if (!c) return;
  const token = ++sectionsDrawn;
  const rows = [];
  for (const lab of state.labels) {
    const known = c.sections.find((s) => s.paper_id === lab.paper_id && s.section === lab.section);
    if (known) { rows.push({ ...known }); continue; }
    let secs = papers.get(lab.paper_id);
    if (!secs) {
      try { secs = (await api("papers/" + encodeURIComponent(lab.paper_id))).sections; } catch (_) { secs = null; }
      if (secs) papers.set(lab.paper_id, secs);
    }
    const hit = (secs || []).find((s) => s.header === lab.section);
    rows.push({ paper_id: lab.paper_id, section: lab.section, resolved: Boolean(hit), text: hit ? hit.text : null });
  }
  if (token !== sectionsDrawn || state.current !== c) return;  // another candidate, or a newer edit, drew since
  $("sections").replaceChildren(...rows.map((s, i) => el("div", {},
    el("h4", { class: s.resolved ? null : "unresolved", text: `${s.section} · ${titleOf(c, s.paper_id)}` }),
    s.resolved ? highlight(s.text, c.evidence, `Text of label ${i + 1}: ${s.section}`)
      : el("p", { class: "unresolved", text: "This label names no section of the paper." }))));
  if (!rows.length) $("sections").replaceChildren(el("p", { class: "note", text: "No label: add one above." }));
}

function highlight(text, evidence, label) {
  // Each labelled section is its own region, so each needs its own name (two alike fail axe's landmark-unique).
  const box = el("section", { tabindex: "0", "aria-label": label });
  let rest = text;
  for (const e of evidence) {
    const at = rest.indexOf(e);
    if (at < 0) continue;
    box.append(rest.slice(0, at), el("mark", { text: e }));
    rest = rest.slice(at + e.length);
  }
  box.append(rest);
  return box;
}

function renderLabels() {
  const c = state.current;
  const rows = state.labels.map((lab, i) => {
    const paper = el("select", { class: "paper", "aria-label": `label ${i + 1} paper` },
      ...c.targets.map((t) => el("option", { value: t.id, text: t.title, selected: t.id === lab.paper_id })));
    const headers = c.targets.find((t) => t.id === lab.paper_id)?.headers || [];
    const section = el("select", { class: "section", "aria-label": `label ${i + 1} section` },
      ...headers.map((h) => el("option", { value: h, text: h, selected: h === lab.section })));
    if (!headers.includes(lab.section)) section.prepend(el("option", { value: lab.section, text: `${lab.section} (names no header)`, selected: true }));
    const relevance = el("select", { class: "relevance", "aria-label": `label ${i + 1} relevance` },
      ...["direct", "supporting"].map((r) => el("option", { value: r, text: r, selected: r === lab.relevance })));
    // Not "Remove": that word is the candidate's verdict, a few centimetres away.
    const remove = el("button", { type: "button", class: "quiet", "aria-label": `Delete label ${i + 1}` }, "Delete label");
    paper.addEventListener("change", () => {
      lab.paper_id = paper.value;
      lab.section = (c.targets.find((t) => t.id === paper.value)?.headers || [""])[0];
      labelsChanged(true);
    });
    section.addEventListener("change", () => { lab.section = section.value; labelsChanged(false); });
    relevance.addEventListener("change", () => { lab.relevance = relevance.value; labelsChanged(false); });
    remove.addEventListener("click", () => { state.labels.splice(i, 1); labelsChanged(true); });
    return el("tr", {}, el("td", {}, paper), el("td", {}, section), el("td", {}, relevance), el("td", {}, remove));
  });
  $("labels").tBodies[0].replaceChildren(...rows);
}

function labelsChanged(redraw) {
  if (!state.current) return;  // a label menu changed while the next candidate loads: nothing to edit yet
  state.labelsEdited = true;
  if (redraw) renderLabels();
  renderSections();
  edited();
}

// --- drafts: edits not yet given a verdict --------------------------------------------------------------

function currentFields() {
  const axes = {};
  document.querySelectorAll("#axes input").forEach((box) => { if (state.rated.has(box.name)) axes[box.name] = box.checked; });
  return { axes, note: $("note").value };
}

function axesChanged() {
  const now = currentFields().axes;
  const was = state.saved.axes;
  return Object.keys(now).length !== Object.keys(was).length || Object.keys(now).some((k) => now[k] !== was[k]);
}

function isDirty() {
  if (!state.current) return false;
  return state.labelsEdited || axesChanged() || $("note").value !== (state.saved.note || "");
}

function readDraft(cid) {
  try { return JSON.parse(localStorage.getItem(draftKey(cid))); } catch (_) { return null; }
}

function edited() {
  if (!state.current) return;
  const cid = state.current.id;
  const had = hasDraft(cid);
  if (isDirty()) localStorage.setItem(draftKey(cid), JSON.stringify({ ...currentFields(), labels: state.labelsEdited ? state.labels : null }));
  else localStorage.removeItem(draftKey(cid));
  state.leaveAsked = null;
  // The green "Saved" line is about the candidate before: it goes once this one has edits, so the two never sit together.
  if (state.savedFor && state.savedFor !== cid && isDirty()) setSaved("", "");
  showDraft();
  if (had !== hasDraft(cid)) renderList();
}

function showDraft(extra) {
  const box = $("draft");
  const dirty = isDirty();
  const parts = [];
  if (state.pendingFlag) parts.push("Flag: write what the lead should look at, then press Ctrl+Enter.");
  if (dirty) {
    const what = [state.labelsEdited ? "labels" : null, $("note").value !== (state.saved.note || "") ? "note" : null,
      axesChanged() ? "quality axes" : null].filter(Boolean);
    parts.push(`Unsaved edits (${what.join(", ")}): a verdict saves them; u undoes them. They are kept in this browser until then.`);
  }
  if (extra) parts.push(extra);
  box.textContent = parts.join(" ");
  box.hidden = !parts.length;
}

function undo() {
  if (!state.current) return;
  localStorage.removeItem(draftKey(state.current.id));
  const c = state.current;
  render(c);
  setSaved(`Unsaved edits of ${c.id} undone.`, "", c.id);
}

// j/k with unsaved edits: ask once; the second press moves on and the edits stay as a draft.
function move(step) {
  if (!state.current) return;
  const next = neighbour(step);
  if (!next) { setSaved(`No other candidate in this view (${$("filter").selectedOptions[0].textContent}).`, ""); return; }
  if (isDirty() && state.leaveAsked !== step) {
    state.leaveAsked = step;
    showDraft(`Press ${step > 0 ? "j" : "k"} again to go on without a verdict: the edits stay here as a draft.`);
    return;
  }
  go(next);
}

// --- verdicts ---------------------------------------------------------------------------------------------

async function verdict(kind) {
  const c = state.current;
  if (!c || state.busy) return;
  const fields = currentFields();
  if (kind === "flag" && !fields.note.trim()) {
    state.pendingFlag = true;
    showDraft();
    $("note").focus();
    return;
  }
  const body = { candidate: c.id, auditor: state.auditor, verdict: kind, axes: fields.axes, note: fields.note };
  if (state.labelsEdited) body.labels = state.labels;
  state.busy = true;
  clearIgnored();
  // The focus leaves the note now: the keys pressed next are shortcuts, never the next candidate's note.
  $("candidate").focus({ preventScroll: true });
  setSaved(`Saving ${kind} on ${c.id}…`, "", c.id);
  try {
    const result = await api("verdicts", body);
    localStorage.removeItem(draftKey(c.id));
    await loadList();
    const next = neighbour(1);
    setSaved(`Saved: ${kind} on ${c.id} by ${state.auditor} (verdict #${result.saved}).`
      + (next ? "" : " No other candidate is left in this view."), "ok", c.id);
    if (next) go(next);
    else { render(result.candidate); $("candidate").focus({ preventScroll: true }); }
  } catch (err) {
    setSaved(`Not saved: ${err.message}`, "no", c.id);
  } finally {
    state.busy = false;
  }
}

// --- the paper dialog -------------------------------------------------------------------------------------

async function openPaper(pid) {
  let p;
  try { p = await api("papers/" + encodeURIComponent(pid)); } catch (err) { showProblem(`Cannot open the paper: ${err.message}`); return; }
  $("paper-title").textContent = `${p.title} (${p.year ?? "no year"})`;
  $("paper-body").replaceChildren(...p.sections.map((s) => el("section", {}, el("h3", { text: s.header }), el("p", { text: s.text }))));
  $("paper-view").showModal();
}

// --- keys -------------------------------------------------------------------------------------------------

function bind() {
  help = helpPanel("help-toggle", "help");
  $("who").addEventListener("submit", (e) => {
    e.preventDefault();
    const name = $("auditor").value.trim();
    if (!name) { $("auditor").reportValidity(); return; }
    signIn(name);
  });
  $("change-name").addEventListener("click", () => askName("Enter the name your next verdicts are saved under."));
  $("filter").addEventListener("change", filterChanged);
  $("note").addEventListener("input", edited);
  document.querySelectorAll("#axes input").forEach((box) => box.addEventListener("change", () => rate(box)));
  document.querySelectorAll("#buttons button").forEach((b) => b.addEventListener("click", () => verdict(b.dataset.verdict)));
  $("add-label").addEventListener("click", () => {
    const t = state.current.targets[0];
    state.labels.push({ paper_id: t.id, section: t.headers[0] || "", relevance: "supporting" });
    labelsChanged(true);
  });
  $("close-paper").addEventListener("click", () => $("paper-view").close());
  window.addEventListener("hashchange", () => {  // a list link, or an address typed or pasted
    const id = routeId();
    if (id && state.auditor && (!state.current || state.current.id !== id)) open(id);
  });

  document.addEventListener("keydown", (e) => {
    if ($("paper-view").open) return;  // the dialog closes itself on Esc
    const typing = isTyping(e.target);
    if (e.key === "Escape") {
      if (help.isOpen()) { help.close(); return; }
      if (typing && !$("desk").hidden) { e.target.blur(); $("candidate").focus({ preventScroll: true }); }
      return;
    }
    if (e.target.id === "note" && e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      if (state.pendingFlag) { verdict("flag"); return; }
      // Without f first, a note gives no verdict: it may say the candidate is wrong, and a Pass would be the
      // opposite. It stays as a draft, and the next key chooses.
      $("candidate").focus({ preventScroll: true });
      showDraft("Note kept. Now choose: p Pass, f Flag (with this note), r Remove.");
      return;
    }
    if (typing || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === "?") { help.toggle(); e.preventDefault(); return; }
    if ($("desk").hidden) return;
    if (state.busy || (!state.current && !$("shown").hidden)) {  // no key acts on a candidate being saved or loaded
      if (AXES[e.key] || CANDIDATE_KEYS.has(e.key)) {
        ignoreKey(e.key);
        e.preventDefault();
      }
      return;
    }
    if (!state.current) {  // nothing shown (an empty filter): only the filter and the list can be reached
      if (e.key === "v") { $("filter").focus(); e.preventDefault(); }
      else if (e.key === "c") { const a = document.querySelector("#list a"); if (a) { a.focus(); e.preventDefault(); } }
      return;
    }
    clearIgnored();
    const actions = {
      j: () => move(1), ArrowRight: () => move(1), k: () => move(-1), ArrowLeft: () => move(-1),
      p: () => verdict("pass"), r: () => verdict("remove"),
      f: () => verdict("flag"),
      n: () => $("note").focus(),
      l: () => { const s = document.querySelector("#labels select.section"); if (s) s.focus(); },
      u: () => undo(),
      v: () => $("filter").focus(),
      c: () => { const a = document.querySelector("#list a[aria-current=true]") || document.querySelector("#list a"); if (a) a.focus(); },
    };
    if (AXES[e.key]) {
      const box = document.querySelector(`#axes input[name=${AXES[e.key]}]`);
      box.checked = box.indeterminate ? true : !box.checked;  // a first press rates the axis yes, as a click does
      rate(box);
    } else if (actions[e.key]) {
      actions[e.key]();
    } else return;
    e.preventDefault();
  });
}

function main() {
  bind();
  const name = localStorage.getItem(NAME_KEY);
  if (name) signIn(name);
  else askName("");
}

main();
