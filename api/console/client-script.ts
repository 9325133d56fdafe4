/**
 * The console's only script, inline under the page's nonce. Pages work without it (forms post and
 * redirect); with it, the inbox, a run's timeline and an experiment follow their event streams, and
 * the answer forms post in the background. Everything it inserts is HTML the server rendered and escaped.
 */
export const CONSOLE_SCRIPT = `
(function () {
  'use strict';
  document.querySelectorAll('[data-hide-with-js]').forEach(function (el) { el.hidden = true; });
  document.querySelectorAll('form[data-autosubmit] select').forEach(function (select) {
    select.addEventListener('change', function () { select.form.submit(); });
  });

  function fragment(html) {
    var template = document.createElement('template');
    template.innerHTML = html;
    return template.content;
  }

  // Answer forms post in the background; the inbox stream then takes the question away everywhere.
  document.addEventListener('submit', function (event) {
    var form = event.target;
    if (!form.matches || !form.matches('form[data-answer]')) return;
    event.preventDefault();
    var button = form.querySelector('button[type=submit]');
    var error = form.querySelector('.error');
    button.disabled = true;
    fetch(form.action, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Requested-With': 'fetch' },
      body: new URLSearchParams(new FormData(form)).toString(),
      credentials: 'same-origin',
    }).then(function (response) {
      if (response.ok) {
        var card = form.closest('[data-key]');
        if (card) card.remove();
        updateEmpty();
        return;
      }
      return response.text().then(function (text) {
        button.disabled = false;
        if (error) error.textContent = text || ('The answer was refused (' + response.status + ').');
      });
    }).catch(function () {
      button.disabled = false;
      if (error) error.textContent = 'The answer could not be sent; check the connection and try again.';
    });
  });

  var inbox = document.getElementById('inbox');
  function updateEmpty() {
    if (!inbox) return;
    var count = inbox.querySelectorAll('[data-key]').length;
    var empty = document.getElementById('inbox-empty');
    if (empty) empty.hidden = count > 0;
    var counter = document.getElementById('inbox-count');
    if (counter) counter.textContent = String(count);
  }
  if (inbox && inbox.dataset.events) {
    var inboxEvents = new EventSource(inbox.dataset.events);
    inboxEvents.onmessage = function (message) {
      var state = JSON.parse(message.data);
      var present = {};
      state.present.forEach(function (key) { present[key] = true; });
      inbox.querySelectorAll('[data-key]').forEach(function (card) {
        if (!present[card.dataset.key]) card.remove();
      });
      // New questions go in their place (newest first); cards already shown are not moved, so a half-written answer keeps its focus.
      var next = null;
      for (var i = state.present.length - 1; i >= 0; i--) {
        var key = state.present[i];
        var existing = inbox.querySelector('[data-key="' + CSS.escape(key) + '"]');
        if (!existing && state.added[key]) {
          var node = fragment(state.added[key]).firstElementChild;
          inbox.insertBefore(node, next);
          existing = node;
        }
        if (existing) next = existing;
      }
      updateEmpty();
    };
  }

  var timeline = document.getElementById('timeline');
  if (timeline && timeline.dataset.events) {
    var runEvents = new EventSource(timeline.dataset.events);
    var status = document.getElementById('run-status');
    runEvents.onmessage = function (message) {
      var event = JSON.parse(message.data);
      if (event.html) timeline.appendChild(fragment(event.html));
      if (event.status && status) {
        status.textContent = event.status;
        status.className = 'badge ' + event.status;
      }
      if (event.final) runEvents.close();
    };
  }

  var experiment = document.getElementById('experiment-live');
  if (experiment && experiment.dataset.events) {
    var experimentEvents = new EventSource(experiment.dataset.events);
    experimentEvents.onmessage = function (message) {
      var state = JSON.parse(message.data);
      experiment.replaceChildren(fragment(state.html));
      if (state.final) experimentEvents.close();
    };
  }
})();
`;
