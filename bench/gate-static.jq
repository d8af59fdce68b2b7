# The equivalent of perf-gate-static in jq, for the benchmark: the
# reference's five checks on the rounded values, and the failure strings.
def sf:
  if . == null then null
  elif type == "number" then .
  elif type == "boolean" then (if . then 1 else 0 end)
  elif type == "string" then (tonumber? // null)
  else null end;
. as $r
| ($r.benchmark_id // "unknown") as $id
| $r.thresholds as $t
| .static_failures =
  (if ($t | type) == "object" then
     [ ["avg_generation_time_s", "max_generation_time_s", 1000],
       ["max_peak_memory_mb", "max_peak_memory_mb", 10],
       ["text_encoder_time_s", "max_text_encoder_time_s", 1000],
       ["dit_time_s", "max_dit_time_s", 1000],
       ["vae_decode_time_s", "max_vae_decode_time_s", 1000] ]
     | map(. as [$k, $tk, $s]
           | ($r[$k] | sf) as $c | ($t[$tk] | sf) as $l
           | select($c != null and $l != null)
           | ($c * $s | round / $s) as $c
           | select($c > $l)
           | "\($id) \($k) exceeded fixed threshold (current=\($c), threshold=\($l))")
   else [] end)
