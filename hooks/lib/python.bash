# shellcheck shell=bash
# Python's string semantics where the lane must read a variable as the
# reference's Python does (PERF_UPLOAD_POLICY): its characters, str.isspace,
# str.isprintable, strip().lower() and repr(). Sourced by lane.bash.

# py_chars S: S's characters as Python reads an environment variable: UTF-8
# sequences, and each byte of an invalid one alone, as the surrogate U+DC80+b
# (surrogateescape). Sets the arrays py_cps (code points) and py_bytes.
py_chars() {
	local LC_ALL=C s=$1 i=0 n=${#1} b c k len cp
	py_cps=() py_bytes=()
	while [ "$i" -lt "$n" ]; do
		printf -v b %d "'${s:i:1}"
		len=0 cp=0
		if ((b < 0x80)); then len=1 cp=$b
		elif ((b >= 0xc2 && b <= 0xdf)); then len=2 cp=$((b & 0x1f))
		elif ((b >= 0xe0 && b <= 0xef)); then len=3 cp=$((b & 0x0f))
		elif ((b >= 0xf0 && b <= 0xf4)); then len=4 cp=$((b & 0x07))
		fi
		for ((k = 1; k < len; k++)); do
			c=-1
			((i + k < n)) && printf -v c %d "'${s:i+k:1}"
			if ((c < 0 || (c & 0xc0) != 0x80)); then
				len=0
				break
			fi
			cp=$(((cp << 6) | (c & 0x3f)))
		done
		if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff)))) ||
			((len == 4 && (cp < 0x10000 || cp > 0x10ffff))); then
			len=0
		fi
		((len > 0)) || len=1 cp=$((0xdc00 + b))
		py_cps+=("$cp")
		py_bytes+=("${s:i:len}")
		i=$((i + len))
	done
}

# py_isspace CP: Python's str.isspace() for the code point CP.
py_isspace() {
	local cp=$1
	((cp >= 9 && cp <= 13)) || ((cp >= 0x1c && cp <= 0x20)) || ((cp == 0x85 || cp == 0xa0)) ||
		((cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a))) ||
		((cp == 0x2028 || cp == 0x2029 || cp == 0x202f || cp == 0x205f || cp == 0x3000))
}

# py_printable CP: Python's str.isprintable() for a non-ASCII code point, as
# perfkite's programs decide it: controls, format characters, separators,
# surrogates and private use are not printable.
py_printable() {
	local cp=$1
	! { ((cp < 0xa0 || cp == 0xad)) || ((cp >= 0xd800 && cp <= 0xdfff)) ||
		((cp >= 0x2000 && cp <= 0x200f)) || ((cp >= 0x2028 && cp <= 0x202f)) ||
		((cp >= 0x205f && cp <= 0x206f)) || ((cp == 0x1680 || cp == 0x3000)) ||
		((cp == 0xfeff || cp == 0x061c || cp == 0x180e)) ||
		((cp >= 0xe000 && cp <= 0xf8ff)) || ((cp >= 0xf0000)) ||
		((cp >= 0xfff9 && cp <= 0xfffb)) || ((cp == 0xfffe || cp == 0xffff)); }
}

# py_strip_lower S: Python's S.strip().lower() (ASCII letters lowered), as
# the reference reads PERF_UPLOAD_POLICY.
py_strip_lower() {
	local LC_ALL=C first=0 last i out=''
	py_chars "$1"
	last=$((${#py_cps[@]} - 1))
	while ((first <= last)) && py_isspace "${py_cps[first]}"; do first=$((first + 1)); done
	while ((last >= first)) && py_isspace "${py_cps[last]}"; do last=$((last - 1)); done
	for ((i = first; i <= last; i++)); do
		out+=${py_bytes[i],,}
	done
	printf '%s' "$out"
}

# py_repr S: Python's repr() of the string S, quotes included.
py_repr() {
	local LC_ALL=C q="'" i cp out=''
	[[ $1 == *"'"* && $1 != *'"'* ]] && q='"'
	py_chars "$1"
	for ((i = 0; i < ${#py_cps[@]}; i++)); do
		cp=${py_cps[i]}
		if ((cp == 92)) || [ "${py_bytes[i]}" = "$q" ]; then
			out+="\\${py_bytes[i]}"
		elif ((cp == 10)); then out+='\n'
		elif ((cp == 13)); then out+='\r'
		elif ((cp == 9)); then out+='\t'
		elif ((cp < 0x20 || cp == 0x7f)); then printf -v out '%s\\x%02x' "$out" "$cp"
		elif ((cp < 0x80)) || py_printable "$cp"; then out+=${py_bytes[i]}
		elif ((cp <= 0xff)); then printf -v out '%s\\x%02x' "$out" "$cp"
		elif ((cp <= 0xffff)); then printf -v out '%s\\u%04x' "$out" "$cp"
		else printf -v out '%s\\U%08x' "$out" "$cp"
		fi
	done
	printf '%s%s%s' "$q" "$out" "$q"
}
