{{/*
A quantity, refused before any arithmetic unless the API stores it exactly as written (README). Takes
a dict: value (string or number), out (filled with text, bytes (float64), scalar (the YAML to write), or error).
*/}}
{{- define "worker-image-lib.parseQuantity" -}}
{{- $out := .out -}}
{{- $text := "" -}}
{{- if kindIs "string" .value -}}
{{- $text = .value -}}
{{- else if or (kindIs "float64" .value) (kindIs "int64" .value) (kindIs "int" .value) -}}
{{- $text = toString .value -}}
{{- end -}}
{{- $_ := set $out "text" $text -}}
{{- $suffix := "" -}}
{{- if not (or (kindIs "string" .value) (kindIs "float64" .value) (kindIs "int64" .value) (kindIs "int" .value)) -}}
{{- $_ := set $out "error" "not a string" -}}
{{- else if gt (len $text) 32 -}}
{{- $_ := set $out "error" (printf "%d characters long, more than the 32 a quantity may have here" (len $text)) -}}
{{- else if not (regexMatch "^([0-9]+(\\.[0-9]*)?|\\.[0-9]+)([eE][-+]?[0-9]+|Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?$" $text) -}}
{{- $_ := set $out "error" "not a Kubernetes quantity" -}}
{{- else -}}
{{- $suffix = regexFind "([eE][-+]?[0-9]+|Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])$" $text -}}
{{- end -}}
{{- if not (hasKey $out "error") -}}
{{- $parts := splitList "." (trimSuffix $suffix $text) -}}
{{- $whole := index $parts 0 -}}
{{- $fraction := "" -}}
{{- if gt (len $parts) 1 -}}
{{- $fraction = index $parts 1 -}}
{{- end -}}
{{- $binary := get (dict "Ki" 1 "Mi" 2 "Gi" 3 "Ti" 4 "Pi" 5 "Ei" 6) $suffix | default 0 | int -}}
{{- $exponent := 0 -}}
{{- if regexMatch "^[eE][-+]?[0-9]" $suffix -}}
{{- $digits := regexReplaceAll "^[eE][-+]?" $suffix "" -}}
{{- if gt (len $digits) 2 -}}
{{- $_ := set $out "error" (printf "written with an exponent of more than 2 digits (%s)" (include "worker-image-lib.truncate" $suffix)) -}}
{{- end -}}
{{- /* atoi, not int: int reads a leading 0 as octal. */ -}}
{{- $exponent = atoi (trimPrefix "+" (substr 1 (len $suffix) $suffix)) -}}
{{- else -}}
{{- $exponent = get (dict "n" -9 "u" -6 "m" -3 "k" 3 "M" 6 "G" 9 "T" 12 "P" 15 "E" 18) $suffix | default 0 | int -}}
{{- end -}}
{{- if not (hasKey $out "error") -}}
{{- $whole = regexReplaceAll "^0+" $whole "" -}}
{{- $fraction = regexReplaceAll "0+$" $fraction "" -}}
{{- /* Decimal places left after the exponent: the API keeps nine (1n). */ -}}
{{- $places := sub (len $fraction) $exponent -}}
{{- if not $fraction -}}
{{- $places = sub (sub 0 $exponent) (sub (len $whole) (len (regexReplaceAll "0+$" $whole ""))) -}}
{{- end -}}
{{- /* The power of ten of the leading digit, so no float is formed for a value that is certainly too large. */ -}}
{{- $lead := add (sub (len $whole) 1) $exponent -}}
{{- if not $whole -}}
{{- $lead = sub $exponent (add 1 (sub (len $fraction) (len (regexReplaceAll "^0+" $fraction "")))) -}}
{{- end -}}
{{- if not (regexReplaceAll "0" (printf "%s%s" $whole $fraction) "") -}}
{{- $_ := set $out "bytes" 0.0 -}}
{{- else if gt (add $lead (mul 3 $binary)) 19 -}}
{{- $_ := set $out "error" "2^63 (8Ei) or more, more than the API server stores" -}}
{{- else if gt (int $places) 9 -}}
{{- $_ := set $out "error" "finer than 1n (more than nine decimal places), which the API server rounds up" -}}
{{- else -}}
{{- $bytes := float64 (printf "%s.%s0e%d" ($whole | default "0") $fraction $exponent) -}}
{{- range until $binary -}}
{{- $bytes = mulf $bytes 1024 -}}
{{- end -}}
{{- if ge $bytes 9223372036854775807.0 -}}
{{- $_ := set $out "error" "2^63 (8Ei) or more, more than the API server stores" -}}
{{- else -}}
{{- $_ := set $out "bytes" $bytes -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if not (hasKey $out "error") -}}
{{- /* Quoted where YAML would misread a bare number: a leading 0 (octal), over 15 significant digits (float). */ -}}
{{- $misread := false -}}
{{- if regexMatch "^[0-9]+$" $text -}}
{{- $misread = and (gt (len $text) 1) (hasPrefix "0" $text) -}}
{{- else if regexMatch "^[0-9.]+([eE][-+]?[0-9]+)?$" $text -}}
{{- $misread = gt (len (regexReplaceAll "^0+|0+$" (regexReplaceAll "[^0-9]" (regexReplaceAll "[eE].*$" $text "") "") "")) 15 -}}
{{- end -}}
{{- $_ := set $out "scalar" (ternary ($text | quote) $text $misread) -}}
{{- end -}}
{{- end -}}

{{/*
Refuses what worker-image-lib.parseQuantity refuses, with the chart's message. Takes a dict: prefix,
field, value, example (the fix, e.g. "a quantity such as 20Gi"), out (filled as parseQuantity fills it).
*/}}
{{- define "worker-image-lib.assertQuantity" -}}
{{- include "worker-image-lib.parseQuantity" (dict "value" .value "out" .out) -}}
{{- with .out.error -}}
{{- fail (printf "%s%s %s is not a plain value: it is %s; it is written into an object as it is, so set %s to %s (at most 32 characters, below 8Ei, no finer than 1n)" $.prefix $.field (include "worker-image-lib.describe" $.value) . $.field $.example) -}}
{{- end -}}
{{- end -}}

{{/*
A quantity in bytes (a float), to compare sizes written differently; refuses what parseQuantity
refuses. Takes a dict: value, what (the object and field it was read from), fix.
*/}}
{{- define "worker-image-lib.quantityBytes" -}}
{{- $q := dict -}}
{{- include "worker-image-lib.parseQuantity" (dict "value" .value "out" $q) -}}
{{- with $q.error -}}
{{- fail (printf "%s %s is not a Kubernetes quantity the chart can compare (it is %s); %s" $.what (include "worker-image-lib.describe" $q.text) . $.fix) -}}
{{- end -}}
{{- $q.bytes -}}
{{- end -}}
