{{/*
kd.feature: "true" when the gate .name is on in .root.Values.featureGates ("A=true,B=false"), else "" (templates
test it with `if`). Fails on a gate this chart does not know or a value other than true/false.
*/}}
{{- define "kd.feature" -}}
{{- $known := dict "IPRetention" false "PodProbeMarkerGate" true -}}
{{- $gates := dict -}}
{{- range $entry := splitList "," (.root.Values.featureGates | default "" | toString) -}}
{{- $entry = trim $entry -}}
{{- if $entry -}}
{{- $kv := splitList "=" $entry -}}
{{- $name := trim (first $kv) -}}
{{- if not (hasKey $known $name) -}}
{{- fail (printf "featureGates: unknown gate %q (known: %s)" $name (keys $known | sortAlpha | join ", ")) -}}
{{- end -}}
{{- $value := ternary "true" (trim (last $kv)) (eq (len $kv) 1) -}}
{{- if not (has $value (list "true" "false")) -}}
{{- fail (printf "featureGates: %s=%s: the value must be true or false" $name $value) -}}
{{- end -}}
{{- $_ := set $gates $name (eq $value "true") -}}
{{- end -}}
{{- end -}}
{{- $on := get $known .name -}}
{{- if hasKey $gates .name -}}{{- $on = get $gates .name -}}{{- end -}}
{{- if $on -}}true{{- end -}}
{{- end -}}

{{/* kd.image: the one image of the agent and the controller */}}
{{- define "kd.image" -}}
{{- .Values.manager.image.repository }}{{ with .Values.manager.image.tag }}:{{ . }}{{ end }}
{{- end -}}
