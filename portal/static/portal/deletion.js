// Follow one deletion operation: poll its JSON status every second until it is done and
// update the page in place. Without JavaScript the page refreshes itself (noscript meta).
(function () {
  "use strict";
  var root = document.getElementById("deletion");
  if (!root || root.dataset.done === "true") { return; }
  var url = root.dataset.statusUrl;
  var label = function (value) {
    var text = String(value || "").replace(/_/g, " ");
    return text.charAt(0).toUpperCase() + text.slice(1);
  };
  var render = function (data) {
    if (root.dataset.status === "queued") {
      // A queued deletion has no steps to draw: once a worker has made it, reload once so
      // the page follows the operation it became.
      if (data.status !== "queued") { window.location.reload(); return true; }
      return false;
    }
    var status = document.getElementById("op-status");
    status.textContent = label(data.status);
    status.className = "status status-" + data.status;
    document.getElementById("op-verified").textContent = data.verified;
    document.getElementById("op-total").textContent = data.total;
    var bar = document.getElementById("op-progress");
    bar.setAttribute("aria-valuenow", data.verified);
    bar.setAttribute("aria-valuemax", data.total);
    bar.firstElementChild.style.width = (data.total ? Math.round(100 * data.verified / data.total) : 0) + "%";
    var list = document.getElementById("op-steps");
    list.replaceChildren.apply(list, data.steps.map(function (step) {
      var item = document.createElement("li");
      item.className = "step step-" + step.status;
      item.dataset.store = step.store;
      var icon = document.createElement("span");
      icon.className = "step-icon";
      icon.setAttribute("aria-hidden", "true");
      var store = document.createElement("span");
      store.className = "step-store";
      store.textContent = label(step.store);
      var state = document.createElement("span");
      state.className = "status status-" + step.status;
      state.textContent = label(step.status);
      item.append(icon, store, state);
      return item;
    }));
    if (data.done) {
      // Reload once so the page shows the final state as the server renders it.
      // Done is completed, or stopped with copies not verified as removed (failed).
      document.getElementById("op-refresh").textContent = data.status === "completed"
        ? "This operation is finished." : "This deletion has stopped.";
      root.dataset.done = "true";
      window.setTimeout(function () { window.location.reload(); }, 400);
    }
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
