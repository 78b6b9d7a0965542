# bash completion for alloclab(1): commands, their options, option values, and files where a
# command takes a spec, a database or a bundle. Installed as
# share/bash-completion/completions/alloclab.

_alloclab() {
    local cur prev command i
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD - 1]}
    local commands="run quick suite bisect check resume runs show report publish history compare fleet prune export import
        allocators census submit status queue cancel schedules"

    command=
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
        -*) ;;
        *) command=${COMP_WORDS[i]}; break ;;
        esac
    done
    if [[ -z $command ]]; then
        COMPREPLY=($(compgen -W "$commands --help --version" -- "$cur"))
        return
    fi

    # Option values.
    case $prev in
    --format)
        case $command in
        allocators | status | queue | schedules) COMPREPLY=($(compgen -W "table json" -- "$cur")) ;;
        suite) COMPREPLY=($(compgen -W "table markdown json" -- "$cur")) ;;
        export) COMPREPLY=($(compgen -W "csv json markdown" -- "$cur")) ;;
        *) COMPREPLY=($(compgen -W "table markdown csv json" -- "$cur")) ;;
        esac
        return ;;
    --what) COMPREPLY=($(compgen -W "samples stats hyperfine" -- "$cur")); return ;;
    --fail-on) COMPREPLY=($(compgen -W "regression" -- "$cur")); return ;;
    --compare-to) COMPREPLY=($(compgen -W "latest" -- "$cur")); return ;;
    -a | --allocators)
        COMPREPLY=($(compgen -W "$(alloclab allocators --names 2>/dev/null)" -- "$cur"))
        return ;;
    --verify) COMPREPLY=($(compgen -W "stdout none" -- "$cur")); return ;;
    --input) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    --threads | --scale) return ;;
    --experiment) return ;;
    -r | -w | -e | -p | -s | -c | --param | --warmup | --env | --prepare | --setup | --cleanup | --timeout | --name) return ;;
    --preload) COMPREPLY=($(compgen -W "$(alloclab allocators --names 2>/dev/null)" -- "$cur"))
        return ;;
    --db | --bundle | -o | --socket) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    --samples | --last | --label | --commit | --cell | --variant | --metric | --good | --bad | --at | --machine | \
        --slurm-job | --expect-machines | --keep-last | --older-than | --keep-every) return ;;
    --machine-policy) COMPREPLY=($(compgen -W "refuse split accept" -- "$cur")); return ;;
    esac

    local options
    case $command in
    run) options="--db --samples --format --quiet --compare-to --relative --allow-missing-baseline --label --commit
        --machine" ;;
    quick) options="--allocators --env --param --samples --warmup --prepare --setup --cleanup --input --verify
        --timeout --name --print-spec --db --format --quiet --label --commit --machine" ;;
    suite) options="--threads --scale --samples --allocators --db --format --quiet --print-spec --list --compare-to
        --machine" ;;
    bisect) options="--variant --good --bad --at --samples --db" ;;
    check) options= ;;
    resume) options="--db --format --quiet" ;;
    runs) options="--db --last --format" ;;
    show) options="--db --format --allocators" ;;
    report) options="-o --compare --history --db" ;;
    publish) options="--db --quiet" ;;
    history) options="--cell --variant --metric --relative --last --format --db" ;;
    compare) options="--db --format --fail-on --relative" ;;
    fleet) options="--db --format --slurm-job --expect-machines" ;;
    prune) options="--db --keep-last --older-than --keep-every --dry-run" ;;
    export) options="--what --format --db --bundle" ;;
    import) options="--db --machine-policy --accept-host-change --experiment" ;;
    allocators) options="--format" ;;
    census) options="--preload --json" ;;
    submit) options="--wait --socket" ;;
    status | queue | schedules) options="--format --socket" ;;
    cancel) options="--socket" ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$options --help" -- "$cur"))
        return
    fi
    case $command in
    run | bisect | check | submit) COMPREPLY=($(compgen -f -X '!*.@(yaml|yml)' -- "$cur") $(compgen -d -- "$cur")) ;;
    import) COMPREPLY=($(compgen -f -- "$cur")) ;;
    show | report | export | resume) COMPREPLY=($(compgen -W "latest" -- "$cur")) ;;
    census | quick) COMPREPLY=($(compgen -c -- "$cur")) ;;
    suite) COMPREPLY=($(compgen -W "cache-scratch cache-thrash frag larson mstress python3 realloc redis sqlite3 xmalloc" -- "$cur")) ;;
    esac
}

complete -F _alloclab alloclab
