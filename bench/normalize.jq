# The equivalent of perf-normalize in jq, for the benchmark: renamed and
# coerced metrics, the policy merge, provenance, run source, identity.
def sf:
  if . == null then null
  elif type == "number" then .
  elif type == "boolean" then (if . then 1 else 0 end)
  elif type == "string" then (tonumber? // null)
  else null end;
def truthy: . != null and . != false and . != 0 and . != "" and . != [] and . != {};
def num($d): if . == null or type == "boolean" then $d else (sf // $d) end;
def gate($d):
  if type == "boolean" then .
  elif type == "string" then (ascii_downcase
    | if IN("1", "true", "yes", "on") then true
      elif IN("0", "false", "no", "off") then false else $d end)
  else $d end;
def policy:
  (if type == "object" then . else {} end) as $o
  | [ ["latency", 0.08, 0.5], ["throughput", 0.08, 0.05], ["memory", 0.05, 256.0],
      ["text_encoder_time_s", 0.05, 0.25], ["dit_time_s", 0.05, 0.25],
      ["vae_decode_time_s", 0.05, 0.25] ]
  | map(. as [$k, $p, $a]
        | ($o[$k] | if type == "object" then . else {} end) as $m
        | {key: $k, value: {threshold_percent: ($m.threshold_percent | num($p)),
                            threshold_absolute: ($m.threshold_absolute | num($a)),
                            gated: ($m.gated | gate(true))}})
  | from_entries;
def prov($k; $e): if (.[$k] | truthy) then .[$k] else ($ENV[$e] // "") end;
def infer:
  if ($ENV.BUILDKITE_PULL_REQUEST // "" | . != "" and (IN("false", "0", "None", "none") | not)) then "pr"
  elif $ENV.BUILDKITE_BRANCH == "main" and $ENV.TEST_SCOPE == "full" then "scheduled_main"
  elif ($ENV.BUILDKITE_COMMIT // "") == "" then "local" else "unknown" end;
. as $r
| (($r.run_source // "") | ascii_downcase) as $rs
| {model_id: ($r.benchmark_id // "unknown"),
   timestamp: (if ($r.timestamp | truthy) then $r.timestamp else (now | todate) end),
   commit_sha: prov("commit"; "BUILDKITE_COMMIT"),
   gpu_type: ($r.device // "unknown"),
   latency: ($r.avg_generation_time_s | sf), throughput: ($r.throughput_fps | sf),
   memory: ($r.max_peak_memory_mb | sf), text_encoder_time_s: ($r.text_encoder_time_s | sf),
   dit_time_s: ($r.dit_time_s | sf), vae_decode_time_s: ($r.vae_decode_time_s | sf),
   regression_thresholds: ($r.regression_thresholds | policy),
   success: true,
   run_source: (if ($rs | IN("pr", "local", "scheduled_main", "unknown")) then $rs else infer end),
   baseline_eligible: false,
   branch: prov("branch"; "BUILDKITE_BRANCH"),
   pr_number: (prov("pr_number"; "BUILDKITE_PULL_REQUEST")
               | if (tostring | . != "" and (IN("false", "0", "None", "none") | not)) then . else "" end),
   test_scope: prov("test_scope"; "TEST_SCOPE"), build_url: prov("build_url"; "BUILDKITE_BUILD_URL"),
   build_id: prov("build_id"; "BUILDKITE_BUILD_ID"), job_id: prov("job_id"; "BUILDKITE_JOB_ID")}
+ ([ "result_schema_version", "workload_id", "variant_id", "benchmark_version", "recipe",
     "recipe_fingerprint", "hardware_profile", "hardware_profile_id", "software_profile",
     "software_profile_id", "environment_metadata", "environment_fingerprint",
     "quality_metadata", "variant_metadata", "static_failures" ]
   | map(. as $k | select($r[$k] != null) | {($k): $r[$k]}) | add // {})
