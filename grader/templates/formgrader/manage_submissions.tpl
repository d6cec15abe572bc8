{#- nbgrader's Manage Submissions, with the assignment's flagged submissions at the top: each with the whole of
    every reason the grader gave (student-controlled text: everything shown is escaped). -#}
{%- extends 'nbgrader/manage_submissions.tpl' -%}

{%- block messages -%}
{%- set flagged = flag_reasons(assignment_id) -%}
{%- if flagged %}
<div class="panel panel-danger" id="flagged-submissions">
  <div class="panel-heading">
    <h4 class="panel-title">Flagged: {{ flagged | length }} submission(s) to look at</h4>
  </div>
  <ul class="list-group">
  {%- for student, reasons in flagged | dictsort %}
    <li class="list-group-item flagged-submission">
      <span class="glyphicon glyphicon-flag" aria-hidden="true"></span>
      <a href="{{ base_url }}/formgrader/manage_students/{{ student | urlencode }}/{{ assignment_id | urlencode }}">{{ student | e }}</a>
      {%- for reason in reasons %}
      <pre class="flag-reason" style="white-space: pre-wrap">{{ reason | e }}</pre>
      {%- else %}
      <p class="flag-reason">no reason of the grader's on record (flagged by hand, or regraded in the Formgrader since)</p>
      {%- endfor %}
    </li>
  {%- endfor %}
  </ul>
</div>
{%- endif %}
{{ super() }}
{%- endblock -%}
