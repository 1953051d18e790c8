#!/usr/bin/env python3
"""Adds lockfile records for platform-specific optional packages that `npm install` left out.

The registry mirror this project installs from lacks some off-platform builds (for example chDB's macOS
library), so npm cannot record them, and `npm ci` then refuses the lockfile as out of sync. Each missing
package gets a record with its version, os and cpu (no tarball: npm never fetches an off-platform optional
package). Run after `npm install <pkg>`: python3 .ci/fix-lockfile.py package-lock.json
"""
import json
import re
import sys

PLATFORM = re.compile(r'-(darwin|linux|win32|freebsd|android|openbsd|sunos|aix|netbsd)-(x64|arm64|arm|ia32|ppc64|s390x|riscv64|loong64|mips64el|ppc64le|x32)(?:-(gnu|musl|msvc|gnueabihf|eabi))?$')
EXTRA = {'fsevents': (['darwin'], None)}

def main(path):
    lock = json.load(open(path))
    packages = lock['packages']
    added = 0
    for parent in list(packages.values()):
        for name, spec in (parent.get('optionalDependencies') or {}).items():
            key = 'node_modules/' + name
            if key in packages:
                continue
            m = PLATFORM.search(name)
            if m:
                os_, cpu = [m.group(1)], [m.group(2)]
            elif name in EXTRA:
                os_, cpu = EXTRA[name]
            else:
                continue
            version = re.sub(r'^[\^~=]', '', spec)
            record = {'version': version, 'optional': True, 'os': os_}
            if cpu:
                record['cpu'] = cpu
            if parent.get('dev'):
                record['dev'] = True
            packages[key] = record
            added += 1
    lock['packages'] = dict(sorted(packages.items(), key=lambda kv: (kv[0] != '', kv[0])))
    with open(path, 'w') as f:
        json.dump(lock, f, indent=2)
        f.write('\n')
    print(f'added {added} record(s)')

if __name__ == '__main__':
    main(sys.argv[1] if len(sys.argv) > 1 else 'package-lock.json')
