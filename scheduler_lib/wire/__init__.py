"""The job model: wire JSON in (strict, any-case enums) and out (canonical, no secrets).

Small modules, one concern each: `wire` (typed readers naming JSON paths), `arm` (names and
ids), `timing` (startTime/recurrence canonical form), `actions` (action validation),
`secrets` (write-only secrets), `jobs`, `collections`, `quotas`. Nothing here touches
storage or the clock.
"""
