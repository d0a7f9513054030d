// AgentHop Play, study mode: the instructions, the consent line and enrolment before the first item, and the clock of
// a timed item. It stays apart from play.js: once a person has enrolled (or entered their key), it fills in the
// participant name and submits play.js's own form, and play.js lists their items as in any play.
// Nothing runs unless the server runs a study (GET /play/api/study).
"use strict";

(function () {
  const { byId: $, el } = window.AgentHopDOM;
  const API = "/play/api";
  const SAVED = "agenthop-play";  // play.js keeps the running attempt's session ID here
  const PARTICIPANT = "agenthop-participant";

  async function call(method, path, body) {
    const init = { method, headers: {} };
    if (body !== undefined) { init.headers["Content-Type"] = "application/json"; init.body = JSON.stringify(body); }
    const response = await fetch(API + path, init);
    let data = null;
    try { data = await response.json(); } catch (_) { data = null; }
    if (!response.ok) throw new Error((data && data.error) || `the server answered ${response.status}`);
    return data;
  }

  function problem(text) { $("study-problem").textContent = text || ""; $("study-problem").hidden = !text; }

  function paragraphs(text) { return text.split(/\n\s*\n/).map((p) => el("p", { text: p.trim() })); }

  // Hand over to play.js: the name is fixed for this page, and its form lists the participant's items.
  function begin(participant) {
    localStorage.setItem(PARTICIPANT, participant);
    const input = $("participant");
    input.value = participant;
    input.readOnly = true;
    $("participant-note").textContent = "enrolled in this study";
    $("study").hidden = true;
    document.body.classList.remove("study-gate");
    $("who").requestSubmit();
  }

  async function enrol(event) {
    event.preventDefault();
    problem("");
    const participant = $("study-name").value.trim();
    try {
      await call("POST", "/study/enrol", { participant, code: $("study-code").value, consent: $("study-consent").checked });
    } catch (err) { problem(`You are not enrolled: ${err.message}`); $("study-name").focus(); return; }
    begin(participant);
  }

  async function resumeWithKey(event) {
    event.preventDefault();
    problem("");
    const participant = $("study-resume-name").value.trim();
    try {
      await call("POST", "/key", { participant, key: $("study-key").value.trim() });
    } catch (err) { problem(`The key was not taken: ${err.message}`); $("study-key").focus(); return; }
    begin(participant);
  }

  // --- the clock of a timed item ------------------------------------------------------------------------------

  function clock() {
    const face = el("span", { id: "study-clock", class: "study-clock", role: "timer", "aria-label": "Time left for this item" });
    $("meters").prepend(face);
    let session = null;
    let deadline = null;
    let asking = false;
    let timedOut = null;  // the session the time limit ended: its end screen says so
    async function read(sid) {
      asking = true;
      try {
        const state = await call("GET", `/sessions/${encodeURIComponent(sid)}`);
        deadline = state.ended || state.time_left_s === null ? null : Date.now() + state.time_left_s * 1000;
        if (state.time_up) { timedOut = sid; sayTimeUp(); }
        return state;
      } catch (_) { deadline = null; return null; } finally { asking = false; }
    }
    async function tick() {
      const sid = localStorage.getItem(SAVED);
      if ($("game").hidden || !sid) { face.textContent = ""; return; }
      if (sid !== session && !asking) { session = sid; await read(sid); }
      if (deadline === null || !$("ending").hidden) { face.textContent = ""; return; }
      const left = Math.max(0, Math.round((deadline - Date.now()) / 1000));
      face.textContent = `Time left ${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}`;
      face.classList.toggle("low", left <= 60);
      if (left === 0 && !asking) {
        // The server ends the attempt when it is next asked (else it says how long is left, and the clock goes on);
        // the page is then loaded again, and play.js shows the attempt as it ended, as after any reload.
        const state = await read(sid);
        if (state && state.ended) location.reload();
      }
    }
    // play.js words an ending by its termination; one the time limit caused is said as such.
    function sayTimeUp() {
      const text = $("ending-text");
      const wording = "Time is up: the study's time for this item ran out, and the attempt ended without an answer.";
      if (timedOut && timedOut === localStorage.getItem(SAVED) && text.textContent !== wording && !$("ending").hidden) {
        text.textContent = wording;
      }
    }
    // An ending the page learnt of from an action (not from the clock): ask the server once whether time ended it.
    const checked = new Set();
    function onEnding() {
      const sid = localStorage.getItem(SAVED);
      if ($("ending").hidden || !sid) return;
      if (!checked.has(sid) && !asking) { checked.add(sid); read(sid); return; }
      sayTimeUp();
    }
    new MutationObserver(onEnding).observe($("ending"), { attributes: true, childList: true, subtree: true, characterData: true });
    setInterval(tick, 1000);
  }

  // --- start-up -------------------------------------------------------------------------------------------------

  async function main() {
    let study;
    try { ({ study } = await call("GET", "/study")); } catch (_) { return; }  // play.js says what is wrong

    if (!study) return;
    document.body.classList.add("study-mode");
    $("study-title").textContent = study.title;
    $("study-instructions").replaceChildren(...paragraphs(study.instructions),
      el("p", { class: "note", text: `You will play ${study.items_per_participant} item${study.items_per_participant === 1 ? "" : "s"}, one after the other, in an order set for you`
        + (study.time_limit_s ? `, with ${Math.round(study.time_limit_s / 60 * 10) / 10} minutes for each.` : ".") }));
    $("study-consent-text").textContent = study.consent;
    if (study.named) $("study-name-note").textContent = "the name you were given";
    $("study-enrol").addEventListener("submit", enrol);
    $("study-resume").addEventListener("submit", resumeWithKey);
    if (study.time_limit_s) clock();
    if (localStorage.getItem(SAVED)) return;  // play.js resumes the attempt this browser was in
    const known = localStorage.getItem(PARTICIPANT);
    if (known) {  // enrolled in this browser before: straight to the list
      try {
        await call("GET", `/items?participant=${encodeURIComponent(known)}`);
        begin(known);
        return;
      } catch (_) { /* not enrolled here: the enrolment page */ }
    }
    document.body.classList.add("study-gate");
    $("study").hidden = false;
    $("study-name").focus();
  }

  main();
}());
