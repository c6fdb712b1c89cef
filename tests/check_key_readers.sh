#!/bin/sh
# grep-level evidence that every key of default.yaml is read somewhere
# (issue 14): for each row of core/settings/settings_table.c, where it is
# read outside core/settings. A settings-field row needs its struct's field
# used (.field or ->field) in core/, plugins/ or detection/; a CORE row the
# key's name quoted outside core/settings and the key list (core/cfg/keys.c);
# a field the settings derive another from (split, half, batch, amp,
# multi_scale) counts by the
# derived field's use; a PLUGIN row the key
# quoted in plugins/ or detection/. REFUSED rows are
# listed. Prints one line per row;
# exits 1 if a row has no reader.
# Usage: check_key_readers.sh SOURCE_DIR [-v]
src=${1:?source dir}
verbose=$2
table=$src/core/settings/settings_table.c
# every line of the C sources outside core/settings and the key list, once
sources=$(mktemp)
trap 'rm -f "$sources"' EXIT
grep -rn --include='*.c' '' "$src/core" "$src/plugins" "$src/detection" |
    grep -v -e '/core/settings/' -e '/core/cfg/keys.c' | sed "s|^$src/||" > "$sources"
first_hit() { # pattern [dir prefixes...]: the first file:line whose text matches
    pattern=$1
    shift
    prefixes=$(printf '%s|' "$@" | sed 's/|$//')
    grep -E "^($prefixes)/[^:]*:[0-9]+:.*$pattern" "$sources" | head -n 1 | cut -d: -f1,2
}
report=$(
# rows, each joined onto one line (a row's reason may span lines)
awk '/^ *[A-Z_]+\(/ { row = $0 } row && !/^ *[A-Z_]+\(/ { row = row " " $0 } row && /\),? *$/ { print row; row = "" }' "$table" |
    sed -n 's/^ *\([A-Z_]*\)(\(.*\)),\{0,1\}$/\1 \2/p' |
    while read -r kind rest; do
        key=$(printf '%s' "$rest" | sed -n 's/^"\([a-z_0-9]*\)".*/\1/p')
        case $kind in
        AUGMENT)
            key=$(printf '%s' "$rest" | tr -d ' ')
            field=$key ;;
        LAUNCH | RUN | OPTIM | LOADER | CKPT | VAL | PREDICT | DIST)
            field=$(printf '%s' "$rest" | cut -d, -f2 | tr -d ' ' | sed 's/.*\.//')
            case $field in split_name) field=split ;; half) field=half_best ;; batch_given) field=batch ;; imgsz_given) field=imgsz ;;
                amp_given) field=amp ;; multi_scale_given) field=multi_scale ;; esac ;;
        CORE | PLUGIN | REFUSED) field= ;;
        *) continue ;;
        esac
        [ -n "$key" ] || continue
        case $kind in
        CORE) where=$(first_hit "\"$key\"" core) ;;
        PLUGIN) where=$(first_hit "\"$key\"" plugins detection) ;;
        REFUSED) where="($kind)" ;;
        *) where=$(first_hit "(\\.|->)$field\\b" core plugins detection) ;;
        esac
        if [ -z "$where" ]; then
            echo "$key ($kind${field:+ .$field}): read nowhere outside core/settings"
        elif [ -n "$verbose" ]; then
            echo "$key ($kind${field:+ .$field}): $where"
        fi
    done
)
[ -n "$report" ] && echo "$report"
rows=$(grep -c '^ *[A-Z_]*("' "$table")
[ "$rows" -gt 80 ] || { echo "only $rows rows parsed from $table"; exit 1; }
if echo "$report" | grep -q 'read nowhere'; then exit 1; fi
echo "every row of $table has a reader outside core/settings (or is REFUSED)"
