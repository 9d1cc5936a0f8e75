// Follow one deletion operation: poll its JSON status every second until it is done and
// update the page in place. Without JavaScript the page reloads itself (the head's noscript).
//
// Only what changed is written: a screen reader announces every write to a live region, and
// a step's node that is replaced loses a reader's place in the list. Once the operation is
// done the page shows what a reload would (heading, completion time, the stopped warning) and
// says the new heading in the live region; focus stays where the reader left it.
(function () {
  "use strict";
  var root = document.getElementById("deletion");
  if (!root) { return; }
  var FOLLOWED = "memledger.deletion.followed";
  var byId = function (id) { return document.getElementById(id); };
  var heading = byId("op-heading");
  var live = byId("op-live");
  var refresh = byId("op-refresh");
  var remember = function (value) {
    try {
      if (value) { window.sessionStorage.setItem(FOLLOWED, value); } else { window.sessionStorage.removeItem(FOLLOWED); }
    } catch (e) { /* storage refused (a private window): the page still reloads */ }
  };
  var recalled = function () {
    try { return window.sessionStorage.getItem(FOLLOWED); } catch (e) { return null; }
  };
  // Reloaded because a worker made the queued deletion (below): the page is new to the reader,
  // so focus its heading, which says what is being deleted now.
  if (recalled() === root.dataset.statusUrl) {
    remember(null);
    heading.tabIndex = -1;
    heading.focus();
  }
  if (root.dataset.done === "true") { return; }
  refresh.textContent = "This page updates by itself every second.";
  var url = root.dataset.statusUrl;
  var label = function (value) {
    var text = String(value || "").replace(/_/g, " ");
    return text.charAt(0).toUpperCase() + text.slice(1).toLowerCase();
  };
  var setText = function (node, text) {
    if (node.textContent !== text) { node.textContent = text; }
  };
  var setClass = function (node, name) {
    if (node.className !== name) { node.className = name; }
  };
  var setAttr = function (node, name, value) {
    if (node.getAttribute(name) !== String(value)) { node.setAttribute(name, value); }
  };
  var setHidden = function (node, hidden) {
    if (node.hidden !== hidden) { node.hidden = hidden; }
  };
  var announce = function (text) { setText(live, text); };
  var drawStep = function (list, step) {
    var item = list.querySelector('li[data-store="' + CSS.escape(step.store) + '"]');
    if (!item) {
      item = document.createElement("li");
      item.dataset.store = step.store;
      item.innerHTML = '<span class="step-icon" aria-hidden="true"></span>'
        + '<span class="step-store"></span> <span class="status"></span> '
        + '<span class="muted step-attempts" hidden></span>';
      item.querySelector(".step-store").textContent = label(step.store);
      list.appendChild(item);
    }
    setClass(item, "step step-" + step.status);
    var state = item.querySelector(".status");
    setClass(state, "status status-" + step.status);
    setText(state, label(step.status));
    var attempts = item.querySelector(".step-attempts");
    if (attempts) {
      setText(attempts, step.attempts > 1 ? step.attempts + " attempts" : "");
      setHidden(attempts, step.attempts < 2);
    }
  };
  var finish = function (data) {
    var stopped = data.status !== "completed";
    setText(heading, data.heading);
    if (data.completed_at) {
      var time = byId("op-completed");
      setAttr(time, "datetime", data.completed_at);
      setText(time, data.completed_label);
      setHidden(byId("op-completed-at"), false);
    }
    var warning = byId("op-stopped");
    if (stopped && warning) {
      setText(byId("op-tries"), data.attempts > 1 ? "after " + data.attempts + " tries " : "");
      setHidden(warning, false);
    }
    setText(refresh, stopped ? "This deletion has stopped." : "This operation is finished.");
    root.dataset.done = "true";
    announce(data.heading + ". " + data.verified + " of " + data.total + " stores verified clean.");
  };
  var render = function (data) {
    if (root.dataset.status === "queued") {
      // A queued deletion has no steps to draw, and the operation a worker makes of it is
      // another record (its memories counted, who asked, why): reload once to follow it, and
      // focus its heading then (above).
      if (data.status !== "queued") {
        remember(url);
        window.location.reload();
        return true;
      }
      return false;
    }
    var status = byId("op-status");
    if (root.dataset.status !== data.status && !data.done) { announce(label(data.status)); }
    setText(status, label(data.status));
    setClass(status, "status status-" + data.status);
    setText(byId("op-verified"), String(data.verified));
    setText(byId("op-total"), String(data.total));
    var bar = byId("op-progress");
    setAttr(bar, "aria-valuenow", data.verified);
    setAttr(bar, "aria-valuemax", data.total);
    var width = (data.total ? Math.round(100 * data.verified / data.total) : 0) + "%";
    if (bar.firstElementChild.style.width !== width) { bar.firstElementChild.style.width = width; }
    var list = byId("op-steps");
    data.steps.forEach(function (step) { drawStep(list, step); });
    root.dataset.status = data.status;
    // Done is completed, or stopped with copies not verified as removed (failed).
    if (data.done) { finish(data); }
    return data.done;
  };
  var poll = function () {
    fetch(url, { headers: { "Accept": "application/json" }, credentials: "same-origin", cache: "no-store" })
      .then(function (response) { if (!response.ok) { throw new Error(response.status); } return response.json(); })
      .then(function (data) { if (!render(data)) { window.setTimeout(poll, 1000); } })
      .catch(function () { window.setTimeout(poll, 3000); });
  };
  window.setTimeout(poll, 500);
})();
