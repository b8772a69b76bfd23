// What a native module file really is, read from its bytes: the operating system and CPU it was compiled for, and
// which Node ABI it binds to. A pack's manifest is checked against this, so a label cannot claim an arm64 build
// for an x86-64 binary (the cross-pack that silently fell back to compiling for the packing machine).
// ELF layout: System V gABI, "ELF Header", "Sections", "Symbol Table"; machine numbers from the gABI registry.

/** The Node ABI a native module binds to. */
export type NativeAbi =
  | { kind: 'node'; modules: number } // NODE_MODULE: only loads in a node whose process.versions.modules is this
  | { kind: 'napi' } // Node-API: loads in every node that has the Node-API version it needs
  | { kind: 'unknown' };

/** A native module file as its bytes describe it. */
export type NativeFile =
  | { kind: 'elf'; platform: string; arch: string; abi: NativeAbi }
  | { kind: 'other'; platform: string } // Mach-O or PE: a build for macOS or Windows
  | { kind: 'invalid'; reason: string };

// e_machine (gABI) to Node's process.arch names.
const machines: Record<number, string> = {
  3: 'ia32',
  8: 'mips',
  20: 'ppc',
  21: 'ppc64',
  22: 's390x',
  40: 'arm',
  62: 'x64',
  183: 'arm64',
  243: 'riscv64',
  258: 'loong64',
};
// EI_OSABI: 0 (System V) and 3 (GNU) are what Linux toolchains write.
const osAbis: Record<number, string> = { 0: 'linux', 3: 'linux', 9: 'freebsd', 12: 'openbsd' };

const SHT_DYNSYM = 11;
const SHN_UNDEF = 0;

/** Reads the platform, CPU and Node ABI of a `.node` file. */
export function readNativeFile(bytes: Buffer): NativeFile {
  if (bytes.length >= 4 && bytes.readUInt32BE(0) === 0x7f454c46) return readElf(bytes);
  if (bytes.length >= 4 && [0xfeedface, 0xfeedfacf, 0xcefaedfe, 0xcffaedfe, 0xcafebabe].includes(bytes.readUInt32BE(0))) {
    return { kind: 'other', platform: 'darwin' };
  }
  if (bytes.length >= 2 && bytes.toString('latin1', 0, 2) === 'MZ') return { kind: 'other', platform: 'win32' };
  return { kind: 'invalid', reason: 'not an ELF, Mach-O or PE file' };
}

interface Reader {
  is64: boolean;
  u16(at: number): number;
  u32(at: number): number;
  word(at: number): number; // Elf32_Addr/Off or Elf64_Addr/Off
}

function readElf(bytes: Buffer): NativeFile {
  const cls = bytes[4];
  const data = bytes[5];
  if ((cls !== 1 && cls !== 2) || (data !== 1 && data !== 2) || bytes.length < 52) return { kind: 'invalid', reason: 'truncated or unknown ELF header' };
  const r = reader(bytes, cls === 2, data === 1);
  const machine = r.u16(18);
  const arch = machines[machine] ?? `elf-machine-${machine}`;
  const platform = osAbis[bytes[7]!] ?? `elf-osabi-${bytes[7]}`;
  try {
    return { kind: 'elf', platform, arch, abi: abiOf(definedDynamicSymbols(bytes, r)) };
  } catch {
    return { kind: 'invalid', reason: 'truncated ELF section or symbol table' };
  }
}

function reader(bytes: Buffer, is64: boolean, little: boolean): Reader {
  const u16 = (at: number): number => (little ? bytes.readUInt16LE(at) : bytes.readUInt16BE(at));
  const u32 = (at: number): number => (little ? bytes.readUInt32LE(at) : bytes.readUInt32BE(at));
  const u64 = (at: number): number => Number(little ? bytes.readBigUInt64LE(at) : bytes.readBigUInt64BE(at));
  return { is64, u16, u32, word: is64 ? u64 : u32 };
}

// The names a shared object exports: entries of .dynsym with a section (defined here, not imported), named in the
// string table that .dynsym's sh_link points at. `strip` keeps both, since the dynamic loader needs them.
function definedDynamicSymbols(bytes: Buffer, r: Reader): string[] {
  const shoff = r.word(r.is64 ? 0x28 : 0x20);
  const shentsize = r.u16(r.is64 ? 0x3a : 0x2e);
  const shnum = r.u16(r.is64 ? 0x3c : 0x30);
  const section = (i: number): { type: number; link: number; offset: number; size: number } => {
    const at = shoff + i * shentsize;
    return r.is64
      ? { type: r.u32(at + 4), link: r.u32(at + 0x28), offset: r.word(at + 0x18), size: r.word(at + 0x20) }
      : { type: r.u32(at + 4), link: r.u32(at + 0x18), offset: r.word(at + 0x10), size: r.word(at + 0x14) };
  };
  const names: string[] = [];
  for (let i = 0; i < shnum; i++) {
    const symtab = section(i);
    if (symtab.type !== SHT_DYNSYM) continue;
    const strtab = section(symtab.link);
    const entsize = r.is64 ? 24 : 16;
    for (let at = symtab.offset; at + entsize <= symtab.offset + symtab.size; at += entsize) {
      const shndx = r.u16(at + (r.is64 ? 6 : 14));
      if (shndx === SHN_UNDEF) continue;
      const start = strtab.offset + r.u32(at);
      const end = bytes.indexOf(0, start);
      if (end < 0 || end > strtab.offset + strtab.size) throw new RangeError('symbol name outside its string table');
      names.push(bytes.toString('latin1', start, end));
    }
  }
  return names;
}

// NODE_MODULE exports node_register_module_v<NODE_MODULE_VERSION>; Node-API modules export napi_register_module_v1.
function abiOf(symbols: readonly string[]): NativeAbi {
  for (const name of symbols) {
    const node = /^node_register_module_v(\d+)$/.exec(name);
    if (node) return { kind: 'node', modules: Number(node[1]) };
  }
  return symbols.includes('napi_register_module_v1') ? { kind: 'napi' } : { kind: 'unknown' };
}
