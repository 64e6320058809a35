# code_exec's Python guard: run as `python3 -I -B -u -c <this file> <policy json> <program>`.
#
# Before the program runs, it installs an audit hook (PEP 578) that refuses reading outside
# the allowed folders, writing outside the session's work folder, starting processes,
# loading native code, signalling other processes and making links. This is a best-effort
# guard, not a sandbox: audit hooks see what CPython reports, and a determined program can
# get around them (crafted bytecode, bugs in C extensions). Hearth says so in its docs; the
# JavaScript side runs under Node's permission model instead.
#
# The hook uses nothing the program can reach and change: every function and value it needs
# is bound as a default argument (functions refuse to have their defaults or code replaced,
# see the object.__setattr__ case), and it never looks up globals or builtins at call time.


def _install_guard():
    import json
    import os
    import sys

    policy = json.loads(sys.argv[1])
    program = sys.argv[2]

    def real(path):
        return os.path.realpath(path)

    def prefixes(paths):
        found = []
        for path in paths:
            if not path:
                continue
            for candidate in (os.path.abspath(path), real(path)):
                candidate = candidate.rstrip('/') + '/'
                if candidate not in found:
                    found.append(candidate)
        return tuple(found)

    interpreter_paths = [sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix, os.path.dirname(real(sys.executable))]
    interpreter_paths += [entry for entry in sys.path if entry]
    interpreter = prefixes(interpreter_paths)
    system_files = prefixes(policy['interpreter_reads'])
    write_roots = prefixes(policy['write'])
    read_roots = None if policy['read'] is None else prefixes(policy['read']) + write_roots + interpreter + system_files
    # Modules that run native code or other interpreters the hook cannot see into; sqlite3
    # and dbm open files from C, where no audit event reports the path.
    blocked_modules = frozenset(policy['blocked_modules'])
    own_pid = os.getpid()

    # _posixsubprocess.fork_exec starts programs without an audit event: neuter it before
    # anything else can import it, and refuse loading a fresh copy below.
    import _posixsubprocess

    def _no_processes(*args, **kwargs):
        raise PermissionError('code_exec: Python code may not start other programs. Use the terminal tool for commands.')

    _posixsubprocess.fork_exec = _no_processes

    write_flags = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
    process_events = frozenset((
        'subprocess.Popen', 'os.system', 'os.exec', 'os.posix_spawn', 'os.spawn', 'os.fork', 'os.forkpty',
        'os.startfile', 'pty.spawn', 'webbrowser.open', 'os.chroot', 'sys.remote_exec',
    ))
    native_events = frozenset(('ctypes.dlopen', 'ctypes.dlsym', 'ctypes.dlsym/handle', 'ctypes.cdata', 'ctypes.cdata/buffer', 'ctypes.call_function'))
    write_events = {
        'os.mkdir': (0,), 'os.rmdir': (0,), 'os.remove': (0,), 'os.rename': (0, 1), 'os.chmod': (0,), 'os.chown': (0,),
        'os.utime': (0,), 'os.truncate': (0,), 'os.setxattr': (0,), 'os.removexattr': (0,), 'os.chflags': (0,), 'os.lchflags': (0,),
        'os.mkfifo': (0,), 'os.mknod': (0,), 'shutil.chown': (0,),
    }
    read_events = frozenset(('os.listdir', 'os.scandir', 'os.listxattr', 'os.getxattr'))
    introspection_events = frozenset(('gc.get_objects', 'gc.get_referrers', 'gc.get_referents'))
    text_for_refused_read = 'only the work folder, FS_ALLOWED_PATHS and the interpreter\'s own files may be read'
    text_for_refused_write = 'Python code may write only in the session\'s work folder'

    def resolve(path, _fspath=os.fspath, _getcwd=os.getcwd, _lstat=os.lstat, _readlink=os.readlink,
                _isinstance=isinstance, _bytes=bytes, _reversed=reversed, _list=list, _OSError=OSError, _PermissionError=PermissionError):
        path = _fspath(path)
        if _isinstance(path, _bytes):
            path = path.decode('utf-8', 'surrogateescape')
        if not path.startswith('/'):
            path = _getcwd() + '/' + path
        pending = _list(_reversed(path.split('/')))
        resolved = ''
        links = 0
        while pending:
            part = pending.pop()
            if part == '' or part == '.':
                continue
            if part == '..':
                resolved = resolved[:resolved.rfind('/')] if '/' in resolved else ''
                continue
            candidate = resolved + '/' + part
            try:
                mode = _lstat(candidate).st_mode
            except _OSError:
                resolved = candidate
                continue
            if mode & 0o170000 == 0o120000:
                links += 1
                if links > 40:
                    raise _PermissionError('code_exec: too many levels of symbolic links')
                target = _readlink(candidate)
                if target.startswith('/'):
                    resolved = ''
                pending.extend(_reversed(target.split('/')))
            else:
                resolved = candidate
        return resolved + '/'

    def allowed(path, roots, _resolve=resolve):
        if roots is None:
            return True
        location = _resolve(path)
        for root in roots:
            if location.startswith(root):
                return True
        return False

    def hook(event, args, _allowed=allowed, _read_roots=read_roots, _write_roots=write_roots, _isinstance=isinstance, _int=int,
             _str=str, _PermissionError=PermissionError, _write_flags=write_flags, _process_events=process_events,
             _native_events=native_events, _write_events=write_events, _read_events=read_events,
             _introspection_events=introspection_events, _blocked=blocked_modules, _interpreter=interpreter, _own_pid=own_pid,
             _read_text=text_for_refused_read, _write_text=text_for_refused_write, _ImportError=ImportError, _guard_functions=[]):
        if event == 'open':
            path, mode, flags = args
            if path is None or _isinstance(path, _int):
                return
            if _isinstance(mode, _str):
                writing = 'w' in mode or 'a' in mode or 'x' in mode or '+' in mode
            else:
                writing = _isinstance(flags, _int) and (flags & _write_flags) != 0
            if writing:
                if not _allowed(path, _write_roots):
                    raise _PermissionError('code_exec: writing ' + _str(path) + ' is refused: ' + _write_text + '.')
            elif not _allowed(path, _read_roots):
                raise _PermissionError('code_exec: reading ' + _str(path) + ' is refused: ' + _read_text + '.')
            return
        if event in _read_events:
            path = args[0]
            if path is not None and not _isinstance(path, _int) and not _allowed(path, _read_roots):
                raise _PermissionError('code_exec: reading ' + _str(path) + ' is refused: ' + _read_text + '.')
            return
        if event in _write_events:
            for index in _write_events[event]:
                path = args[index]
                if _isinstance(path, _int) or not _allowed(path, _write_roots):
                    raise _PermissionError('code_exec: changing ' + _str(path) + ' is refused: ' + _write_text + '.')
            return
        if event == 'os.symlink' or event == 'os.link':
            raise _PermissionError('code_exec: Python code may not make links.')
        if event in _process_events:
            raise _PermissionError('code_exec: Python code may not start other programs. Use the terminal tool for commands.')
        if event in _native_events:
            raise _PermissionError('code_exec: Python code may not load or call native code (' + event + ').')
        if event in _introspection_events:
            raise _PermissionError('code_exec: ' + event + ' is not available in code_exec.')
        if event == 'import':
            name = args[0]
            filename = args[1]
            top = name.split('.')[0] if _isinstance(name, _str) else ''
            base = filename.replace('\\', '/').split('/')[-1].split('.')[0] if _isinstance(filename, _str) else ''
            if top in _blocked or base in _blocked or base == '_posixsubprocess' or (top == '_posixsubprocess' and filename is not None):
                raise _ImportError('code_exec: the module ' + _str(name) + ' is not available in code_exec (it runs native code or opens files the guard cannot see).')
            if _isinstance(filename, _str):
                location = filename if filename.startswith('/') else '/' + filename
                for root in _interpreter:
                    if location.startswith(root):
                        return
                raise _ImportError('code_exec: loading the native module ' + filename + ' is refused: only the interpreter\'s own modules load.')
            return
        if event == 'os.kill':
            pid = args[0]
            if pid != _own_pid and pid != 0 and pid != -_own_pid:
                raise _PermissionError('code_exec: Python code may signal only its own process.')
            return
        if event == 'os.killpg':
            if args[0] != _own_pid and args[0] != 0:
                raise _PermissionError('code_exec: Python code may signal only its own process.')
            return
        if event == 'object.__setattr__':
            for function in _guard_functions:
                if args[0] is function:
                    raise _PermissionError('code_exec: the guard\'s functions cannot be changed.')
            return

    # Filled after the fact: the hook cannot name itself in its own defaults.
    hook.__defaults__[-1].extend((hook, allowed, resolve, _no_processes))
    sys.addaudithook(hook)
    return program


def _run(program):
    import sys
    import traceback
    import types

    sys.argv = [program]
    with open(program, 'rb') as source:
        code = compile(source.read(), program, 'exec')
    main = types.ModuleType('__main__')
    main.__file__ = program
    main.__builtins__ = __builtins__
    sys.modules['__main__'] = main
    try:
        exec(code, main.__dict__)
    except SystemExit:
        raise
    except BaseException as error:
        # The program's own frames only: the guard's frames tell the reader nothing.
        traceback.print_exception(type(error), error, error.__traceback__.tb_next)
        sys.stdout.flush()
        raise SystemExit(1)


_run(_install_guard())
