/**
 * The seccomp filter every jail gets (docs/security.md, *The jail*): it refuses the two ioctls
 * that push input into a terminal (TIOCSTI types into it, TIOCLINUX can paste a selection), so a
 * jailed process cannot type commands into the terminal Hearth was started from, whatever
 * descriptor it holds. Everything else is allowed; the rest of the jail does the confining.
 *
 * bubblewrap loads a compiled classic-BPF program from a descriptor (`--seccomp <fd>`). The
 * program is a dozen instructions, assembled here rather than through libseccomp: it checks the
 * architecture each system call was made with (a 64-bit machine also runs 32-bit programs, whose
 * `ioctl` has another number) and, on x86-64, refuses the x32 ABI outright, which would otherwise
 * reach `ioctl` under a third number.
 */

const loadWord = 0x20; // BPF_LD | BPF_W | BPF_ABS
const jumpIfEqual = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const jumpIfAtLeast = 0x35; // BPF_JMP | BPF_JGE | BPF_K
const returnValue = 0x06; // BPF_RET | BPF_K

const allow = 0x7fff_0000; // SECCOMP_RET_ALLOW
const refuseWithEperm = 0x0005_0000 | 1; // SECCOMP_RET_ERRNO | EPERM

// Offsets in struct seccomp_data: nr, arch, instruction_pointer, args[6] (64-bit each, little-endian).
const numberOffset = 0;
const architectureOffset = 4;
const secondArgumentLowOffset = 16 + 8;

const terminalInput = 0x5412; // TIOCSTI
const consoleControl = 0x541c; // TIOCLINUX
const x32Bit = 0x4000_0000; // __X32_SYSCALL_BIT

interface Abi {
  architecture: number;
  ioctl: number;
  refusesX32?: true;
}

/** The ABIs a process may call the kernel with, per machine Node reports (`process.arch`). */
const abisByMachine: Record<string, Abi[]> = {
  x64: [
    { architecture: 0xc000_003e, ioctl: 16, refusesX32: true }, // AUDIT_ARCH_X86_64
    { architecture: 0x4000_0003, ioctl: 54 }, // AUDIT_ARCH_I386
  ],
  arm64: [
    { architecture: 0xc000_00b7, ioctl: 29 }, // AUDIT_ARCH_AARCH64
    { architecture: 0x4000_0028, ioctl: 54 }, // AUDIT_ARCH_ARM
  ],
};

type Target = string | 'next';

interface Instruction {
  code: number;
  k: number;
  /** Labels jumped to when the comparison holds or not (jumps only). */
  whenTrue?: Target;
  whenFalse?: Target;
  label?: string;
}

function assemble(program: Instruction[]): Buffer {
  const positions = new Map<string, number>();
  program.forEach((instruction, index) => instruction.label !== undefined && positions.set(instruction.label, index));
  const buffer = Buffer.alloc(program.length * 8);
  program.forEach((instruction, index) => {
    const offset = (target: Target | undefined): number => {
      if (target === undefined || target === 'next') return 0;
      const position = positions.get(target);
      if (position === undefined || position <= index || position - index - 1 > 255) throw new Error(`tty filter: bad jump to ${target}`);
      return position - index - 1;
    };
    buffer.writeUInt16LE(instruction.code, index * 8);
    buffer.writeUInt8(offset(instruction.whenTrue), index * 8 + 2);
    buffer.writeUInt8(offset(instruction.whenFalse), index * 8 + 3);
    buffer.writeUInt32LE(instruction.k >>> 0, index * 8 + 4);
  });
  return buffer;
}

/**
 * The compiled filter for this machine, or undefined where its system-call numbers are not known
 * here (then jails run without it; /health says so).
 */
export function terminalInputFilter(machine: string = process.arch): Buffer | undefined {
  const abis = abisByMachine[machine];
  if (abis === undefined) return undefined;
  const program: Instruction[] = [{ code: loadWord, k: architectureOffset }];
  abis.forEach((abi, index) => program.push({ code: jumpIfEqual, k: abi.architecture, whenTrue: `abi${index}`, whenFalse: 'next' }));
  program.push({ code: returnValue, k: allow });
  abis.forEach((abi, index) => {
    program.push({ code: loadWord, k: numberOffset, label: `abi${index}` });
    if (abi.refusesX32) program.push({ code: jumpIfAtLeast, k: x32Bit, whenTrue: 'refuse', whenFalse: 'next' });
    program.push({ code: jumpIfEqual, k: abi.ioctl, whenTrue: 'ioctl', whenFalse: 'allow' });
  });
  program.push(
    { code: loadWord, k: secondArgumentLowOffset, label: 'ioctl' },
    { code: jumpIfEqual, k: terminalInput, whenTrue: 'refuse', whenFalse: 'next' },
    { code: jumpIfEqual, k: consoleControl, whenTrue: 'refuse', whenFalse: 'allow' },
    { code: returnValue, k: allow, label: 'allow' },
    { code: returnValue, k: refuseWithEperm, label: 'refuse' },
  );
  return assemble(program);
}
