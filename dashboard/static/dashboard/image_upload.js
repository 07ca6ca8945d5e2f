// The image upload form with a progress bar. Without JavaScript the form
// posts the file with the rest (multipart); with it, the form creates the
// image first (asking for JSON), then sends the file alone, as the raw body,
// to the console's upload endpoint, showing XHR upload progress.
(function () {
  "use strict";

  function showErrors(form, errors) {
    form.querySelectorAll(".errorlist.js").forEach(function (list) { list.remove(); });
    Object.keys(errors).forEach(function (name) {
      var input = form.querySelector("[name=" + name + "]");
      var list = document.createElement("ul");
      list.className = "errorlist js";
      errors[name].forEach(function (message) {
        var item = document.createElement("li");
        item.textContent = message;
        list.appendChild(item);
      });
      (input ? input.parentNode : form).appendChild(list);
    });
  }

  function upload(form, file, target, token) {
    var box = document.getElementById("upload-progress");
    var bar = document.getElementById("upload-bar");
    var label = document.getElementById("upload-percent");
    box.hidden = false;
    var xhr = new XMLHttpRequest();
    xhr.open("POST", target.upload_url);
    xhr.setRequestHeader("Content-Type", "application/octet-stream");
    xhr.setRequestHeader("X-CSRFToken", token);
    xhr.upload.addEventListener("progress", function (event) {
      if (event.lengthComputable) {
        var percent = Math.floor((event.loaded / event.total) * 100);
        bar.value = percent;
        label.textContent = percent + "% (" + event.loaded + " of " + event.total + " bytes)";
      }
    });
    xhr.addEventListener("load", function () {
      if (xhr.status >= 200 && xhr.status < 300) {
        bar.value = 100;
        label.textContent = "done";
      } else {
        var message = "upload failed (HTTP " + xhr.status + ")";
        try { message = JSON.parse(xhr.responseText).error || message; } catch (e) { /* not JSON */ }
        label.textContent = message;
      }
      window.location.href = target.detail_url;
    });
    xhr.addEventListener("error", function () {
      label.textContent = "upload interrupted; the image stays queued";
      window.setTimeout(function () { window.location.href = target.detail_url; }, 1500);
    });
    xhr.send(file);
  }

  function enhance(form) {
    form.addEventListener("submit", function (event) {
      var fileInput = form.querySelector("input[type=file]");
      var file = fileInput && fileInput.files && fileInput.files[0];
      if (!file || !window.XMLHttpRequest || !window.FormData) { return; }  // plain post
      event.preventDefault();
      var data = new FormData(form);
      data.delete(fileInput.name);
      var token = form.querySelector("[name=csrfmiddlewaretoken]").value;
      form.querySelector("button[type=submit]").disabled = true;
      fetch(window.location.pathname, {
        method: "POST", body: data, credentials: "same-origin",
        headers: { "Accept": "application/json", "X-CSRFToken": token }
      }).then(function (response) {
        return response.json().then(function (body) { return { ok: response.ok, body: body }; });
      }).then(function (result) {
        if (!result.ok) {
          form.querySelector("button[type=submit]").disabled = false;
          showErrors(form, result.body.errors || { __all__: ["The image could not be created."] });
          return;
        }
        upload(form, file, result.body, token);
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("form[data-image-upload]").forEach(enhance);
  });
})();
