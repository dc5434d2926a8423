/* Warden console: says when live regions are stale, copies names and tokens. No framework; htmx does the polling. */
(function () {
  'use strict';

  var body = document.body;
  var banner = document.getElementById('stale-banner');
  var pollMs = parseInt(body.getAttribute('data-poll-ms'), 10) || 2000;
  /* Data older than this (three missed refreshes, at least 10 s) is called stale even when requests succeed. */
  var staleAfterMs = Math.max(3 * pollMs, 10000);
  var lastOk = Date.now();
  var dataTime = null; /* local time at which the shown data was read: when it arrived minus its age */
  var failure = null;

  function seconds(ms) {
    var s = Math.max(0, Math.round(ms / 1000));
    return s < 120 ? s + ' s' : Math.floor(s / 60) + ' min ' + (s % 60) + ' s';
  }

  function isLive(evt) {
    var elt = evt.detail && evt.detail.elt;
    return !!(elt && elt.classList && elt.classList.contains('live'));
  }

  function readAge(root) {
    var el = (root || document).querySelector('.asof[data-age-ms]');
    if (el) {
      dataTime = Date.now() - (parseInt(el.getAttribute('data-age-ms'), 10) || 0);
    }
  }

  function render() {
    if (!banner) {
      return;
    }
    var now = Date.now();
    var message = null;
    if (failure) {
      /* a page that loaded without data (the gateway failed already) has had no update to be stale from */
      message = (dataTime === null ? 'no data yet' : 'stale: last update ' + seconds(now - lastOk) + ' ago')
        + ' — ' + failure;
    } else if (dataTime !== null && now - dataTime > staleAfterMs) {
      message = 'stale: the data shown is ' + seconds(now - dataTime) + ' old — the gateway has not refreshed it';
    }
    if (message) {
      banner.textContent = message;
      banner.hidden = false;
      body.classList.add('is-stale');
    } else if (!banner.hidden) {
      banner.hidden = true;
      banner.textContent = '';
      body.classList.remove('is-stale');
    }
  }

  function firstLine(text) {
    var line = (text || '').trim().split('\n')[0];
    return line.length > 200 ? line.slice(0, 200) + '…' : line;
  }

  /* Do not replace a live region under a selection the user is making (to copy from it). */
  document.addEventListener('htmx:beforeRequest', function (evt) {
    if (!isLive(evt)) {
      return;
    }
    var sel = window.getSelection && window.getSelection();
    if (sel && !sel.isCollapsed && sel.anchorNode && evt.detail.elt.contains(sel.anchorNode)) {
      evt.preventDefault();
    }
  });
  document.addEventListener('htmx:afterRequest', function (evt) {
    if (isLive(evt) && evt.detail.successful) {
      lastOk = Date.now();
      failure = null;
      render();
    }
  });
  document.addEventListener('htmx:afterSwap', function (evt) {
    if (isLive(evt)) {
      readAge(evt.detail.elt);
      render();
    }
  });
  document.addEventListener('htmx:sendError', function (evt) {
    if (isLive(evt)) {
      failure = 'gateway unreachable';
      render();
    }
  });
  document.addEventListener('htmx:timeout', function (evt) {
    if (isLive(evt)) {
      failure = 'the gateway did not answer in time';
      render();
    }
  });
  document.addEventListener('htmx:responseError', function (evt) {
    if (isLive(evt)) {
      var xhr = evt.detail.xhr;
      var text = xhr ? firstLine(xhr.responseText) : '';
      failure = 'gateway answered ' + (xhr ? xhr.status : '?') + (text ? ': ' + text : '');
      render();
    }
  });

  /* Copy buttons: the clipboard API where the page is a secure context, else a hidden textarea, else select the text. */
  function feedback(button, ok) {
    button.textContent = ok ? 'copied' : 'press Ctrl+C';
    button.classList.add(ok ? 'copied' : 'failed');
    setTimeout(function () {
      button.textContent = 'copy';
      button.classList.remove('copied', 'failed');
    }, 1500);
  }

  function fallbackCopy(button, text) {
    var buffer = document.createElement('textarea');
    buffer.value = text;
    buffer.setAttribute('readonly', '');
    buffer.className = 'copy-buffer';
    document.body.appendChild(buffer);
    buffer.select();
    var ok = false;
    try {
      ok = document.execCommand('copy');
    } catch (e) {
      ok = false;
    }
    document.body.removeChild(buffer);
    if (!ok) {
      var target = button.previousElementSibling;
      if (target && window.getSelection) {
        var range = document.createRange();
        range.selectNodeContents(target);
        var sel = window.getSelection();
        sel.removeAllRanges();
        sel.addRange(range);
      }
    }
    feedback(button, ok);
  }

  document.addEventListener('click', function (evt) {
    var button = evt.target && evt.target.closest ? evt.target.closest('button.copy') : null;
    if (!button) {
      return;
    }
    evt.preventDefault();
    var text = button.getAttribute('data-copy') || '';
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(function () {
        feedback(button, true);
      }, function () {
        fallbackCopy(button, text);
      });
    } else {
      fallbackCopy(button, text);
    }
  });

  readAge(document.querySelector('.live'));
  setInterval(render, 1000);
})();
