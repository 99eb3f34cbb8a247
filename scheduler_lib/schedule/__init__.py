"""The schedule engine: a job's `recurrence`/`startTime` in, its occurrences out.

Knows no storage, queue or HTTP: `parse` validates and normalises the job's timing,
`calendar` expands one recurrence period into candidate instants, `recurrence` walks the
periods (seeking in constant time however far back the start lies), `timezones` resolves the
zone a schedule is evaluated in, `preview` renders the next runs for the CLI and the API.
"""
