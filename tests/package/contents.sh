#!/usr/bin/env bash
# Checks what the three .debs of scripts/package.sh hold and need, against this machine's
# Debian packages (not against the build's own settings):
# - stoker-slurm-plugin: spank_stoker.so in the folder where slurm-wlm-basic-plugins keeps
#   Slurm's own plugins; Depends pins the Slurm major release of the installed libslurm-dev,
#   and the installed Slurm satisfies it; /etc/slurm/plugstack.conf.d/stoker.conf is a
#   conffile whose only plugin line is commented out, names that .so and enable=opt-in.
# - stoker: /usr/bin/stoker, its manual page and the Prometheus console pages. python3-stoker: the module in
#   /usr/lib/python3/dist-packages, pinned to /usr/bin/python3's version.
# - every package has a copyright file and a changelog; apt can resolve their Depends here.
#
#   tests/package/contents.sh DEBS_DIR
#
# Exit status: 0 all checks passed; 1 a check failed (each failure is printed).
set -euo pipefail
[ $# -eq 1 ] || { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
debs=$(cd "$1" && pwd -P)
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok   $*"; }

deb_of() { ls "$debs/$1"_*.deb 2>/dev/null | head -n 1; }
files_of() { dpkg-deb --fsys-tarfile "$1" | tar -t | sed 's|^\./|/|'; }
field() { dpkg-deb --field "$1" "$2"; }

plugin=$(deb_of stoker-slurm-plugin) cli=$(deb_of stoker) py=$(deb_of python3-stoker)
for f in "$plugin" "$cli" "$py"; do [ -n "$f" ] || { echo "FAIL: a .deb is missing in $debs"; exit 1; }; done

# The plugin: where Debian's Slurm keeps its plugins, pinned to the installed Slurm release.
slurm_dir=$(dirname "$(dpkg -L slurm-wlm-basic-plugins | grep -m 1 '/task_affinity\.so$')")
so=$slurm_dir/spank_stoker.so
if files_of "$plugin" | grep -qx "$so"; then ok "plugin at $so"; else fail "no $so in $plugin"; fi
dev=$(dpkg-query -W -f='${Version}' libslurm-dev)
release=$(sed -E 's/^([0-9]+)\.([0-9]+).*/\1.\2/' <<<"$dev")
major=${release%.*} minor=${release#*.}
next=$(printf '%s.%02d' "$major" $((10#$minor + 1)))
pin="slurm-wlm-basic-plugins (>= $release), slurm-wlm-basic-plugins (<< $next)"
depends=$(field "$plugin" Depends)
if [[ $depends == *"$pin"* ]]; then ok "plugin Depends pins Slurm $release: $pin"
else fail "plugin Depends '$depends' lacks '$pin' (libslurm-dev $dev)"; fi
running=$(dpkg-query -W -f='${Version}' slurm-wlm-basic-plugins)
if dpkg --compare-versions "$running" ge "$release" && dpkg --compare-versions "$running" lt "$next"
then ok "installed Slurm $running satisfies the pin"; else fail "installed Slurm $running outside the pin"; fi

# The conffile: declared, shipped disabled, naming the packaged .so with enable=opt-in.
conf=/etc/slurm/plugstack.conf.d/stoker.conf
conffiles=$(dpkg-deb --ctrl-tarfile "$plugin" | tar -xO ./conffiles 2>/dev/null || true)
if [ "$conffiles" = "$conf" ]; then ok "conffile $conf"; else fail "conffiles is '$conffiles'"; fi
text=$(dpkg-deb --fsys-tarfile "$plugin" | tar -xO ".$conf")
active=$(grep -vE '^[[:space:]]*(#|$)' <<<"$text" || true)
[ -z "$active" ] && ok "$conf has no active line" || fail "$conf has active lines: $active"
line="#optional $so enable=opt-in"
if grep -qxF "$line" <<<"$text"; then ok "$conf holds '$line'"; else fail "$conf lacks '$line'"; fi

# The command and the module.
consoles=/usr/share/doc/stoker/examples/consoles
for f in /usr/bin/stoker /usr/share/man/man1/stoker.1.gz $consoles/stoker-job.html \
  $consoles/stoker-node.html $consoles/stoker.lib $consoles/grafana-stoker.json; do
  files_of "$cli" | grep -qx "$f" && ok "stoker ships $f" || fail "stoker lacks $f"
done
pydir=/usr/lib/python3/dist-packages/stoker
for f in "$pydir/__init__.py" "$pydir/libstoker.so"; do
  files_of "$py" | grep -q "^$f" && ok "python3-stoker ships $f" || fail "python3-stoker lacks $f*"
done
# Pure Python over libstoker.so: any python3 from 3.9 on, not one release.
if [[ $(field "$py" Depends) == *"python3 (>= 3.9)"* && $(field "$py" Depends) != *"<<"* ]]; then
  ok "python3-stoker needs python3 3.9 or newer"
else fail "python3-stoker Depends '$(field "$py" Depends)' is not python3 (>= 3.9) alone"; fi

# Debian policy: copyright and changelog; Depends that apt can resolve on this machine.
for f in "$plugin" "$cli" "$py"; do
  name=$(field "$f" Package)
  for doc in copyright changelog.gz; do
    files_of "$f" | grep -qx "/usr/share/doc/$name/$doc" || fail "$name lacks /usr/share/doc/$name/$doc"
  done
done
if out=$(apt-get install --simulate --no-install-recommends "$plugin" "$cli" "$py" 2>&1); then
  ok "apt-get can install the three here (simulated)"
else
  fail "apt-get install --simulate: $(tail -n 5 <<<"$out")"
fi

[ $failures = 0 ] || { echo "$failures check(s) failed"; exit 1; }
echo "all package checks passed"
