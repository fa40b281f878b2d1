/*
 * Live return-to-player preview on the game form: as the operator types the decks, a multiplier or a
 * side bet's paytable, ask the admin's rtp-preview endpoint (exact odds, computed on the server) and
 * update the panel: a row per main bet, then one per side bet offered.
 * No dependencies; the panel is already filled in by the server for the initial values.
 */
(function () {
  "use strict";

  var FIELDS = {
    decks: "id_decks",
    player: "id_player_multiplier",
    banker: "id_banker_multiplier",
    tie: "id_tie_multiplier",
    policy: "id_rtp_policy"
  };
  var PAYTABLES = "id_side_bets";  // the side bets' editor: a row per side bet, an input per event
  var CELLS = ["multiplier", "win_probability", "rtp", "house_edge", "min_rtp", "max_rtp"];
  var DELAY_MS = 250;

  // The editor's side bets as JSON, {side bet: {event: multiplier}}: those ticked, their filled events.
  function sideBets(table) {
    var offered = {};
    table.querySelectorAll("tr[data-side-bet]").forEach(function (row) {
      var box = row.querySelector('input[type="checkbox"]');
      if (!box || !box.checked) { return; }
      var paytable = {};
      row.querySelectorAll("input[data-event]").forEach(function (input) {
        var value = input.value.trim();
        if (value !== "") { paytable[input.getAttribute("data-event")] = value; }
      });
      offered[row.getAttribute("data-side-bet")] = paytable;
    });
    return JSON.stringify(offered);
  }

  // The side bets' rows follow what the server answered: made again on each answer.
  function sideRows(panel, bets) {
    var body = panel.querySelector("tbody");
    if (!body) { return; }
    body.querySelectorAll("tr[data-side]").forEach(function (row) { row.remove(); });
    bets.forEach(function (bet) {
      if (!bet.side) { return; }
      var row = document.createElement("tr");
      row.setAttribute("data-bet", bet.bet_type);
      row.setAttribute("data-side", "1");
      var heading = document.createElement("th");
      heading.scope = "row";
      heading.textContent = bet.label;
      row.appendChild(heading);
      CELLS.forEach(function (name) {
        var cell = document.createElement("td");
        cell.setAttribute("data-field", name);
        row.appendChild(cell);
      });
      body.appendChild(row);
    });
  }

  function setText(element, text) {
    if (element) { element.textContent = text; }
  }

  function render(panel, data) {
    var ok = Boolean(data && data.ok);
    var invalid = panel.querySelector('[data-field="invalid"]');
    var warning = panel.querySelector('[data-field="warning"]');
    // With an invalid field there is no shoe to name: the heading says no more than "Return to player".
    setText(panel.querySelector('[data-field="shoe"]'), ok ? "(exact, " + data.decks + "-deck shoe)" : "");
    if (invalid) {
      invalid.hidden = ok;
      if (!ok) {
        var messages = [];
        var errors = (data && data.errors) || {};
        Object.keys(errors).forEach(function (name) { messages.push(errors[name]); });
        invalid.textContent = "Enter valid decks, multipliers and paytables to see the return to player. " +
          messages.join(" ");
      }
    }
    if (warning) {
      warning.hidden = !(ok && data.over_100);
      warning.textContent = ok ? data.warning : "";
    }
    var policyErrors = panel.querySelector('[data-field="policy_errors"]');
    if (policyErrors) {
      var problems = (ok && data.policy_errors) || [];
      policyErrors.hidden = problems.length === 0;
      policyErrors.textContent = problems.join(" ");
    }
    setText(panel.querySelector('[data-field="policy"]'), ok && data.policy ? data.policy.name : "none");
    setText(panel.querySelector('[data-field="policy_max_rtp"]'),
            ok && data.policy && data.policy.max_rtp ? data.policy.max_rtp + " %" : "—");
    var bets = {};
    if (ok) {
      sideRows(panel, data.bets);
      data.bets.forEach(function (bet) { bets[bet.bet_type] = bet; });
    }
    panel.querySelectorAll("tr[data-bet]").forEach(function (row) {
      var bet = bets[row.getAttribute("data-bet")];
      row.classList.toggle("pf-rtp-over", Boolean(bet && bet.over_100));
      setText(row.querySelector('[data-field="multiplier"]'), bet ? bet.multiplier : "?");
      setText(row.querySelector('[data-field="win_probability"]'), bet ? bet.win_probability + " %" : "?");
      var rtp = row.querySelector('[data-field="rtp"]');
      setText(rtp, bet ? bet.rtp + " %" : "?");
      if (rtp) { rtp.title = bet ? "exactly " + bet.rtp_exact : ""; }
      setText(row.querySelector('[data-field="house_edge"]'), bet ? bet.house_edge + " %" : "?");
      row.classList.toggle("pf-rtp-outside-policy", Boolean(bet && bet.outside_policy));
      setText(row.querySelector('[data-field="min_rtp"]'), bet && bet.min_rtp ? bet.min_rtp + " %" : "—");
      setText(row.querySelector('[data-field="max_rtp"]'), bet && bet.max_rtp ? bet.max_rtp + " %" : "—");
    });
  }

  function start() {
    var panel = document.getElementById("rtp-preview");
    if (!panel || !window.fetch) { return; }
    var inputs = {};
    var names = Object.keys(FIELDS);
    for (var i = 0; i < names.length; i++) {
      inputs[names[i]] = document.getElementById(FIELDS[names[i]]);
      if (!inputs[names[i]]) { return; }  // a read-only view: nothing to follow
    }
    var paytables = document.getElementById(PAYTABLES);
    if (!paytables) { return; }
    var url = panel.getAttribute("data-url");
    var timer = null;
    var latest = 0;

    function update() {
      var params = new URLSearchParams();
      names.forEach(function (name) { params.set(name, inputs[name].value); });
      params.set("side_bets", sideBets(paytables));
      var request = ++latest;
      fetch(url + "?" + params.toString(), {
        credentials: "same-origin",
        headers: { "Accept": "application/json", "X-Requested-With": "XMLHttpRequest" }
      })
        .then(function (response) { return response.json(); })
        .then(function (data) { if (request === latest) { render(panel, data); } })
        .catch(function () { /* keep the last figures; the server re-validates on save */ });
    }

    function schedule() {
      if (timer) { clearTimeout(timer); }
      timer = setTimeout(update, DELAY_MS);
    }

    names.forEach(function (name) {
      inputs[name].addEventListener("input", schedule);
      inputs[name].addEventListener("change", schedule);
    });
    paytables.addEventListener("input", schedule);
    paytables.addEventListener("change", schedule);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
