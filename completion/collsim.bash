# bash completion of collsim: commands, options, machine types and their
# spec keys, collectives and algorithm names, all asked of the program
# itself (`collsim complete WORD...`, src/app/cmd_complete.c), so that
# this script never goes stale.  Anything it has no answer for completes
# as a file name.  Installed by meson into bash-completion's folder.
_collsim() {
    local cur words cword
    cur="${COMP_WORDS[COMP_CWORD]}"
    # the words after "collsim", up to the one under the cursor
    words=("${COMP_WORDS[@]:1:COMP_CWORD}")
    local IFS=$'\n'
    local out
    out="$("${COMP_WORDS[0]}" complete "${words[@]}" 2>/dev/null)"
    if [[ -n "$out" ]]; then
        COMPREPLY=($out)
        # a spec or an option that takes "=": no space after it
        if [[ "${COMPREPLY[*]}" == *[:=] ]] && type compopt &>/dev/null; then
            compopt -o nospace 2>/dev/null
        fi
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}
complete -F _collsim collsim
