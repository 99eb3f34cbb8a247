"""The job model: wire JSON in (strict, any-case enums) and out (canonical, no secrets).

Small modules, one concern each: `wire` (typed readers naming JSON paths), `arm` (names and
ids), `timing` (startTime/recurrence canonical form), `actions` (action validation),
`secrets` (write-only secrets), `jobs` (`parse_job`: a request's properties into the domain's
`JobDefinition`, every validator once; `job_to_wire`), `collections`, `quotas`; each 2026-12-01
extension property's validator beside its catalog entry. Nothing here touches storage or the
clock.
"""
