# tests/app/complete.zsh SRC BIN - completion/_collsim in a real interactive
# zsh with compinit (the completion system users have), driven through a
# pseudo-terminal (zsh/zpty): each case types words and a TAB, then wraps the
# line zsh completed in `print` and runs it, so that the completed line comes
# back as one output line "BUF<...>", which this script prints.
zmodload zsh/zpty || exit 77
setopt extendedglob
src=$1 bin=$2
zpty z 'zsh -f -i'
zpty -w z "PS1='> '; fpath=($src/completion \$fpath); path=(${bin:h} \$path); autoload -U compinit; compinit -u -D"
complete_line() {
    local out=''
    zpty -wn z "$1"$'\t'
    zpty -w z $'\C-aprint -r -- "BUF<\C-e>"'
    zpty -r z out $'*\nBUF<*>*'
    out=${out//$'\r'/}
    print -r -- ${(M)${(f)out}:#BUF<*>}
}
complete_line "${bin:t} swe"
complete_line "${bin:t} run --machine alphabeta:topo=ring,pa"
complete_line "${bin:t} list algorithms --coll allr"
zpty -d z
