/*
 * The periodic task form: the crontab's help says in words when the chosen schedule runs
 * (django-celery-beat's inline script, as a file: the pages allow no inline script).
 */
(function () {
  "use strict";

  var $ = django.jQuery;
  var crontabs = JSON.parse(document.getElementById("readable-crontabs").textContent);
  var help = JSON.parse(document.getElementById("crontab-help").textContent);

  function explain(translation) {
    var element = $(".field-crontab .help");
    element.text(help);
    element.append(document.createElement("br"), document.createTextNode("Translation: " + translation));
  }

  $(".field-crontab_translation").hide();
  $(".field-crontab").change(function () {
    explain(crontabs[$("#id_crontab").val()]);
  });
}());
