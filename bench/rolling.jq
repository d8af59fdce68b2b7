# The equivalent of perf-gate-rolling's lookup in jq, for the benchmark:
# select each batch record's exact cohort (successful, eligible), sort by
# timestamp, take the last 5, and the per-metric medians.
#   jq -n --slurpfile batch BATCH -f bench/rolling.jq < history records
def ident: [.workload_id, .variant_id, .benchmark_version, .recipe_fingerprint,
            .hardware_profile_id, .software_profile_id] | map(tostring) | tojson;
def median:
  map(select(. != null)) | sort
  | if length == 0 then null
    elif length % 2 == 1 then .[(length - 1) / 2]
    else (.[length / 2 - 1] + .[length / 2]) / 2 end;
($batch | map(ident)) as $want
| reduce (inputs
          | select(.success != false and .success != null or (has("success") | not))
          | select(.baseline_eligible == true
                   or ((has("baseline_eligible") | not) and (has("run_source") | not)))
          | ident as $k | select($want | index($k))
          | {k: $k, t: .timestamp,
             m: {latency, throughput, memory, text_encoder_time_s, dit_time_s,
                 vae_decode_time_s}}) as $h
    ({}; .[$h.k] += [$h])
| . as $by
| $batch[]
| ($by[ident] // [] | sort_by(.t) | .[-5:]) as $w
| {model_id, baseline_n: ($w | length),
   medians: ([$w[].m] | {latency: map(.latency) | median,
                         throughput: map(.throughput) | median,
                         memory: map(.memory) | median,
                         text_encoder_time_s: map(.text_encoder_time_s) | median,
                         dit_time_s: map(.dit_time_s) | median,
                         vae_decode_time_s: map(.vae_decode_time_s) | median})}
