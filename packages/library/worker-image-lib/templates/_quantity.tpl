{{/*
A Kubernetes quantity in bytes (as a float), for comparing sizes written in
different forms: binary (Ki..Ei), decimal (n..E), or an exponent (e/E N). The
digits are read as one integer and scaled by a single multiplication or
division, so equal quantities written differently compare equal.
*/}}
{{- define "worker-image-lib.quantityBytes" -}}
{{- $q := . | toString | trim -}}
{{- $suffix := regexFind "(Ki|Mi|Gi|Ti|Pi|Ei|[eE][-+]?[0-9]+|[numkMGTPE])$" $q -}}
{{- $number := trimSuffix $suffix $q -}}
{{- if not (regexMatch "^([0-9]+(\\.[0-9]*)?|\\.[0-9]+)$" $number) -}}
{{- fail (printf "%q is not a Kubernetes quantity (write sizes such as 20Gi, 21474836480 or 20G)" $q) -}}
{{- end -}}
{{- $parts := splitList "." $number -}}
{{- $fraction := "" -}}
{{- if gt (len $parts) 1 -}}
{{- $fraction = index $parts 1 -}}
{{- end -}}
{{- $value := float64 (printf "0%s%s" (index $parts 0) $fraction) -}}
{{- $binary := dict "Ki" 1 "Mi" 2 "Gi" 3 "Ti" 4 "Pi" 5 "Ei" 6 -}}
{{- $decimal := dict "n" -9 "u" -6 "m" -3 "" 0 "k" 3 "M" 6 "G" 9 "T" 12 "P" 15 "E" 18 -}}
{{- $exponent := sub 0 (len $fraction) -}}
{{- if hasKey $binary $suffix -}}
{{- range until (get $binary $suffix | int) -}}
{{- $value = mulf $value 1024 -}}
{{- end -}}
{{- else if hasKey $decimal $suffix -}}
{{- $exponent = add $exponent (get $decimal $suffix) -}}
{{- else -}}
{{- $exponent = add $exponent (substr 1 (len $suffix) $suffix | trimPrefix "+" | int) -}}
{{- end -}}
{{- $scale := 1.0 -}}
{{- range until (ternary (sub 0 $exponent) $exponent (lt (int $exponent) 0) | int) -}}
{{- $scale = mulf $scale 10 -}}
{{- end -}}
{{- if lt (int $exponent) 0 -}}
{{- divf $value $scale -}}
{{- else -}}
{{- mulf $value $scale -}}
{{- end -}}
{{- end -}}
