package dev.maxsim4j.cli.io;

import dev.maxsim4j.cli.UsageException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.AccessDeniedException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Collection;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;
import java.util.zip.CRC32;

/**
 * An output file written in full to a temporary file beside it and then moved into place in one step,
 * so that a failed or interrupted run never leaves a half-written file or destroys the previous one.
 * Created before the work starts, it also proves the target folder exists and is writable.
 *
 * <p>The temporary file is {@code .maxsim4j-TAG-HEX.tmp} (TAG: the CRC-32 of the target's name, HEX: random), and
 * while it is written this process holds an operating-system lock on {@code .maxsim4j-TAG-HEX.lock} beside it. A run
 * killed outright (kill -9, a crash) leaves both; the next run writing the same output removes those whose lock it
 * can take, which proves that no live process owns them (the system drops a process's locks when it ends, killed or
 * not). A lock file, not the temporary file itself, is locked because closing any channel of a file releases the
 * process's locks on it, and every writer opens and closes the temporary file. The temporary file is held open from
 * its creation, and written, given its owner and permissions through this process's descriptor of it
 * (/proc/self/fd/N), never again by name: whoever may write the folder could otherwise put a link to another file in
 * its place while the work runs (without /proc, as on macOS, the name is used).
 */
public final class AtomicOutput implements AutoCloseable {
  /** Links followed before a chain is taken for a loop (the kernel's own limit). */
  private static final int MAX_LINKS = 40;
  private static final String PREFIX = ".maxsim4j-";
  /** Exactly the names this class gives its temporary and lock files; nothing else is ever removed. */
  private static final Pattern OURS = Pattern.compile("\\.maxsim4j-[0-9a-f]{8}-[0-9a-f]{16}\\.(tmp|lock)");
  /**
   * A lock file without its temporary file is removed only when this old: the owner creates it a moment before it
   * locks it, and in that moment the lock could be taken by a sweep.
   */
  private static final long ORPHAN_LOCK_MILLIS = 10 * 60 * 1000;

  private final String option;
  private final Path shown;
  private final Path target;
  private final Path temp;
  private final Path lockFile;
  private final FileChannel lockChannel;
  /** The permissions a new target gets (a new file's here, as the user's umask makes it); null off POSIX. */
  private final Set<PosixFilePermission> newFilePermissions;
  /** The temporary file's identity at creation: its owner and permissions are set only on that file. */
  private final Object tempKey;
  /** The temporary file, held open from its creation to the end. */
  private final FileChannel tempChannel;
  /** The name the writers write through ({@link #heldName}). */
  private final Path written;
  private boolean committed;

  private AtomicOutput(String option, Path shown, Path target, Path temp, Path lockFile, FileChannel lockChannel,
      Set<PosixFilePermission> newFilePermissions, Object tempKey, FileChannel tempChannel, Path written) {
    this.option = option;
    this.shown = shown;
    this.target = target;
    this.temp = temp;
    this.lockFile = lockFile;
    this.lockChannel = lockChannel;
    this.newFilePermissions = newFilePermissions;
    this.tempKey = tempKey;
    this.tempChannel = tempChannel;
    this.written = written;
  }

  /**
   * The output path {@code value} given as {@code option}: refuses an empty one, one that ends in a separator
   * (a folder's name, which {@link Path#of} would silently turn into the file without it) and one that names an
   * existing folder. These are mistakes in the command line, so they are usage errors (exit 2), as every other
   * malformed option value is.
   */
  public static Path target(String option, String value) {
    if (value == null || value.isEmpty()) {
      throw new UsageException(option + " is empty; expected a file to write");
    }
    if (value.endsWith("/") || value.endsWith(java.io.File.separator)) {
      throw new UsageException(option + " " + value + " names a folder (it ends in a separator); expected"
          + " a file to write");
    }
    Path target = PathArgument.of(option, value);
    if (Files.isDirectory(target)) {
      throw new UsageException(option + " " + target + " is a directory; expected a file to write");
    }
    return target;
  }

  /**
   * Checks {@code target} (given as {@code option}) and reserves its temporary file: refuses a folder, a
   * device, pipe or socket (which a move would replace), a file this user may not write, a missing or unwritable
   * folder to write into, and
   * any of {@code inputs} (compared as files, not names). A symbolic link is written through, not replaced.
   */
  public static AtomicOutput create(String option, Path target, Collection<Path> inputs) throws IOException {
    if (target.toString().isEmpty()) {
      throw new UsageException(option + " is empty; expected a file to write");
    }
    if (Files.isDirectory(target)) {
      throw new UsageException(option + " " + target + " is a directory; expected a file to write");
    }
    if (Files.exists(target)) {
      if (!Files.isRegularFile(target)) {
        throw new IllegalArgumentException(option + " " + target + " is not a regular file (a device, pipe or"
            + " socket); expected a file to write");
      }
      for (Path input : inputs) {
        if (Files.exists(input) && Files.isSameFile(target, input)) {
          throw new IllegalArgumentException(option + " " + target + " is also the input " + input
              + "; write the output to another file");
        }
      }
      if (!Files.isWritable(target)) {
        // the move into place needs the folder's permission only: it would replace a file its owner write-protected.
        // Root is refused a file for other reasons than its permission bits (a read-only mount, which the file
        // store's own answer misses for a folder bound read-only, an immutable file, a container without the
        // capability), which "read-only for this user" would hide
        boolean root = Integer.valueOf(0).equals(effectiveUser());
        throw new IllegalArgumentException(option + " " + target + (root || Files.getFileStore(target).isReadOnly()
            ? " cannot be written (a read-only mount, an immutable file, or no permission); expected a file that may"
            + " be written" : " is read-only for this user; expected a file it may write (or a new name)"));
      }
    }
    Path file = linkTarget(option, target);
    Path folder = file.toAbsolutePath().getParent();
    if (folder == null || !Files.isDirectory(folder)) {
      // a path past the system's length limit is "not there" too: its reason says so, where "does not exist" misled
      String missing = folder == null ? "no such file" : Absent.why(folder);
      throw new IllegalArgumentException(option + " " + target + ": the folder " + folder
          + (folder != null && Files.exists(folder) ? " is not a folder" : missing.equals("no such file")
              ? " does not exist" : " cannot be reached (" + missing + ")")
          + "; expected a file in an existing folder");
    }
    String unnameable = Absent.why(file);
    if (!unnameable.equals("no such file")) {
      // refused before any work: the move into place at its end would fail, naming the temporary file
      throw new IllegalArgumentException(option + " " + target + ": " + unnameable + "; expected "
          + (unnameable.contains("too long") ? "a file name this file system takes" : "a file this run can create"));
    }
    // one spelling of the folder for every run of this JVM, so that a sweep knows this JVM's own files by name
    Path real = folder.toRealPath();
    String tag = tag(file.getFileName().toString());
    sweep(real, tag);
    // a name of its own length, not the target's plus a suffix: a target name near the file system's limit
    // would leave no room for one
    String stem = PREFIX + tag + "-" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
    Path temp = real.resolve(stem + ".tmp");
    Path lockFile = real.resolve(stem + ".lock");
    FileChannel lockChannel = null;
    FileChannel tempChannel = null;
    Set<PosixFilePermission> newFile = null;
    Object fileKey = null;
    Path written = temp;
    try {
      lockChannel = FileChannel.open(lockFile, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
      TemporaryFiles.track(lockFile);
      lock(lockChannel);
      requireReplaceable(option, target, file, real, lockFile);
      boolean posix = Files.getFileStore(real).supportsFileAttributeView(PosixFileAttributeView.class);
      // created anew (never through a link) and held open: its owner's alone while it is written (the group it will
      // have is set at the end, and a umask of 0277 would leave no write, while the writers reopen it); a new target
      // ends with a new file's permissions here, the lock file's
      tempChannel = posix
          ? FileChannel.open(temp, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
              PosixFilePermissions.asFileAttribute(OWNER_ONLY))
          : FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
      TemporaryFiles.track(temp);
      written = heldName(option, target, temp);
      fileKey = Files.readAttributes(written, BasicFileAttributes.class,
          written == temp ? new LinkOption[] {LinkOption.NOFOLLOW_LINKS} : new LinkOption[0]).fileKey();
      if (posix) {
        newFile = Files.getPosixFilePermissions(lockFile);
        bestEffortPermissions(written, OWNER_ONLY);
      }
    } catch (AccessDeniedException e) {
      abandon(lockChannel, lockFile, tempChannel, temp);
      throw new IllegalArgumentException(option + " " + target + ": the folder " + folder + " is not writable");
    } catch (FileSystemException e) {
      abandon(lockChannel, lockFile, tempChannel, temp);
      throw new IllegalArgumentException(option + " " + target + ": cannot create a file in the folder " + folder
          + " (" + reason(e) + ")");
    } catch (IOException | RuntimeException | Error e) {
      abandon(lockChannel, lockFile, tempChannel, temp);
      throw e;
    }
    return new AtomicOutput(option, target, file, temp, lockFile, lockChannel, newFile, fileKey, tempChannel,
        written);
  }

  /**
   * A name of the open temporary file {@code temp} that no change to its folder can redirect: this process's
   * descriptor whose link reads {@code temp}; without /proc (macOS), {@code temp} itself. The writers open the file by
   * name, and whoever may write the folder could swap a link to another file in under its own name while the work
   * runs. None such: the name was taken away at once (renamed, removed), which is refused, since the name would then
   * be all there is to write through.
   */
  private static Path heldName(String option, Path target, Path temp) throws IOException {
    Set<Path> now = descriptors();
    if (now == null) {
      return temp;
    }
    for (Path descriptor : now) {
      try {
        if (Files.readSymbolicLink(descriptor).equals(temp)) {
          return descriptor;
        }
      } catch (IOException closedMeanwhile) {
        // another thread's descriptor, closed while listed
      }
    }
    // a system that shows the file under another path (an overlay's layer): a descriptor of the very file
    // the name holds, where it still holds a file
    BasicFileAttributes named = Files.readAttributes(temp, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
    for (Path descriptor : now) {
      try {
        if (named.isRegularFile() && named.fileKey() != null
            && named.fileKey().equals(Files.readAttributes(descriptor, BasicFileAttributes.class).fileKey())) {
          return descriptor;
        }
      } catch (IOException closedMeanwhile) {
        // as above
      }
    }
    throw new IllegalArgumentException(option + " " + target + ": its temporary file " + temp + " was moved or"
        + " removed as it was made; expected a folder no other process changes meanwhile");
  }

  private static final Path DESCRIPTORS = Path.of("/proc", "self", "fd");

  /** This process's open descriptors (/proc/self/fd/N), or null where the system lists none (no /proc). */
  private static Set<Path> descriptors() throws IOException {
    Set<Path> open = new java.util.HashSet<>();
    try (DirectoryStream<Path> listed = Files.newDirectoryStream(DESCRIPTORS)) {
      for (Path descriptor : listed) {
        open.add(DESCRIPTORS.resolve(descriptor.getFileName()));
      }
    } catch (NoSuchFileException | UnsupportedOperationException noProc) {
      return null;
    }
    return open;
  }

  /** This process's effective user id ({@code /proc/self} is its user's), or null where the system does not say. */
  private static Object effectiveUser() {
    try {
      return unix(PROC.resolve("self"), "uid");
    } catch (IOException | SecurityException noProc) {
      return null;
    }
  }

  private static final Set<PosixFilePermission> OWNER_ONLY = EnumSet.of(PosixFilePermission.OWNER_READ,
      PosixFilePermission.OWNER_WRITE);

  /**
   * No link followed to reach {@code file}, but a descriptor's own (/proc/self/fd/N, which names the file this
   * process holds open, whatever its folder holds now).
   */
  private static LinkOption[] noLinkBut(Path file) {
    return file.startsWith(DESCRIPTORS) ? new LinkOption[0] : new LinkOption[] {LinkOption.NOFOLLOW_LINKS};
  }

  /** Releases the lock and removes the temporary file of a create that failed; quietly, as a cleanup. */
  private static void abandon(FileChannel lockChannel, Path lockFile, FileChannel tempChannel, Path temp) {
    try {
      if (tempChannel != null) {
        tempChannel.close();
        Files.deleteIfExists(temp);
        TemporaryFiles.done(temp);
      }
    } catch (IOException e) {
      // the next run writing this output sweeps it
    }
    release(lockChannel, lockFile);
  }

  /**
   * Sets {@code file}'s permissions where the file system lets it (not through a link): some (FUSE, say) refuse, and
   * the file then keeps those it has, its owner's alone at creation.
   */
  private static void bestEffortPermissions(Path file, Set<PosixFilePermission> permissions) {
    try {
      Files.getFileAttributeView(file, PosixFileAttributeView.class, noLinkBut(file)).setPermissions(permissions);
    } catch (IOException | UnsupportedOperationException | SecurityException refused) {
      // kept as they are
    }
  }

  /**
   * Refuses, before any work, an existing {@code file} the move into place could not replace: another user's file in
   * a sticky folder (where only a file's owner, the folder's or root may replace it); {@code ours} is a file this
   * process just created there. Where the system does not say (no "unix" attributes), and for a file mounted onto
   * the name (which its device number cannot tell on every file system), the move itself fails, naming the target.
   */
  private static void requireReplaceable(String option, Path shown, Path file, Path folder, Path ours)
      throws IOException {
    if (!Files.exists(file)) {
      return;
    }
    Object me = unix(ours, "uid");
    Object mode = unix(folder, "mode");
    boolean sticky = mode instanceof Integer m && (m & 01000) != 0;
    if (sticky && me != null && !me.equals(0) && !me.equals(unix(file, "uid")) && !me.equals(unix(folder, "uid"))) {
      throw new IllegalArgumentException(option + " " + shown + " is another user's file in a folder where only a"
          + " file's owner may replace it (its sticky bit, as /tmp has); expected a file of this user's (or a new"
          + " name)");
    }
  }

  /** The "unix" attribute {@code name} of {@code file}, or null where the system has none. */
  private static Object unix(Path file, String name) throws IOException {
    try {
      return Files.getAttribute(file, "unix:" + name);
    } catch (UnsupportedOperationException | IllegalArgumentException notUnix) {
      return null;
    }
  }

  /** The tag of an output's file names: the CRC-32 of its name, as 8 hex digits. */
  static String tag(String fileName) {
    CRC32 crc = new CRC32();
    crc.update(fileName.getBytes(StandardCharsets.UTF_8));
    return HexFormat.of().toHexDigits((int) crc.getValue());
  }

  /**
   * Locks a new lock file. Where the file system has no locks (some network ones) it stays unlocked; a sweep there
   * cannot take a lock either, so it removes nothing.
   */
  private static void lock(FileChannel channel) {
    try {
      channel.lock();
    } catch (IOException unsupported) {
      // see above: an unlocked lock file on such a system only means that nothing is swept
    }
  }

  /** Closes {@code channel} (releasing its lock) and removes {@code file}; quietly, as a cleanup. */
  private static void release(FileChannel channel, Path file) {
    try {
      if (channel != null) {
        channel.close();
      }
      Files.deleteIfExists(file);
    } catch (IOException ignored) {
      // a lock file left behind is removed by the next run writing the same output
    } finally {
      TemporaryFiles.done(file);
    }
  }

  /**
   * Removes the temporary and lock files of runs killed while writing an output of this tag into {@code folder}:
   * those whose lock this process can take, so no live process owns them. This JVM's own are skipped without
   * being opened (a second channel closed here would release this JVM's lock on them). Best effort: what cannot
   * be read or removed stays for a later run.
   */
  private static void sweep(Path folder, String tag) {
    Set<String> stems = new TreeSet<>();
    Set<String> withTemp = new TreeSet<>();
    try (DirectoryStream<Path> found = Files.newDirectoryStream(folder, PREFIX + tag + "-*.{tmp,lock}")) {
      for (Path p : found) {
        String name = p.getFileName().toString();
        if (OURS.matcher(name).matches()) {
          String stem = name.substring(0, name.lastIndexOf('.'));
          stems.add(stem);
          if (name.endsWith(".tmp")) {
            withTemp.add(stem);
          }
        }
      }
    } catch (IOException | RuntimeException unreadable) {
      return;
    }
    for (String stem : stems) {
      Path temp = folder.resolve(stem + ".tmp");
      Path lockFile = folder.resolve(stem + ".lock");
      if (TemporaryFiles.isTracked(temp) || TemporaryFiles.isTracked(lockFile)) {
        continue;
      }
      try {
        if (Files.exists(lockFile, LinkOption.NOFOLLOW_LINKS)
            && !Files.isRegularFile(lockFile, LinkOption.NOFOLLOW_LINKS)) {
          continue; // no lock of ours: a pipe would block the open, a link lead it out of the folder
        }
        if (!withTemp.contains(stem)
            && System.currentTimeMillis() - Files.getLastModifiedTime(lockFile).toMillis() < ORPHAN_LOCK_MILLIS) {
          continue;
        }
        // a temporary file without its lock file is a dead run's too: the owner makes the lock file first and
        // removes it last; the lock file made here for it is locked and removed like any other
        try (FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
            LinkOption.NOFOLLOW_LINKS); FileLock lock = channel.tryLock()) {
          if (lock != null) {
            Files.deleteIfExists(temp);
            Files.deleteIfExists(lockFile);
          }
        }
      } catch (IOException | OverlappingFileLockException | UnsupportedOperationException skipped) {
        // held, gone meanwhile, or unreadable: left for a later run
      }
    }
  }

  /** Checks {@code target} as {@link #create} does, before long work whose result goes there. */
  public static void check(String option, Path target, Collection<Path> inputs) throws IOException {
    AtomicOutput probe = create(option, target, inputs);
    try {
      probe.close();
    } catch (FileSystemException e) {
      // made but not removable (EPERM): an append-only folder (chattr +a), where no output could replace its target
      if (!"Operation not permitted".equals(e.getReason())) {
        throw e;
      }
      throw new IllegalArgumentException(option + " " + target + ": files can be made in " + probe.temp.getParent()
          + " but not removed (append-only?), so " + probe.temp.getFileName() + " and " + probe.lockFile.getFileName()
          + " stay there until it is writable again; expected a folder where an output's temporary file can be"
          + " renamed onto its target", e);
    }
  }

  /** Writes {@code text} (UTF-8) to {@code target} atomically. */
  public static void writeString(String option, Path target, Collection<Path> inputs, String text)
      throws IOException {
    try (AtomicOutput output = create(option, target, inputs)) {
      output.write(file -> Files.writeString(file, text));
      output.commit();
    }
  }

  /** The file a (chain of) symbolic link(s) names, existing or not; {@code target} itself if it is no link. */
  private static Path linkTarget(String option, Path target) throws IOException {
    Path file = target.toAbsolutePath();
    for (int links = 0; ; links++) {
      // a process's open file (/dev/stdout is /proc/self/fd/1, /dev/fd a link to /proc/self/fd): replacing the file it
      // names would drop what the process writes there, such as a command's table redirected to the same file
      if (file.normalize().startsWith(PROC) || underProc(file.getParent())) {
        throw new IllegalArgumentException(option + " " + target + " is a file a process holds open (" + file
            + "); expected a file to write");
      }
      if (!Files.isSymbolicLink(file)) {
        return file;
      }
      if (links == MAX_LINKS) {
        throw new IllegalArgumentException(option + " " + target + " is a loop of symbolic links; expected a file"
            + " to write");
      }
      requireTrustedLink(option, target, file);
      file = file.getParent().resolve(Files.readSymbolicLink(file));
    }
  }

  private static final Path PROC = Path.of("/proc");

  /**
   * Refuses to follow {@code link} where the kernel would not (its protected_symlinks rule, which a link followed
   * here, not by the kernel, escapes): in a sticky folder others may write, a link owned by neither this user nor the
   * folder's owner, which another user may have planted to have this run (as root, say) replace the file it names.
   */
  private static void requireTrustedLink(String option, Path target, Path link) throws IOException {
    Path folder = link.getParent().toRealPath(); // the folder itself, where its name is a link (/var/lock)
    Object mode = unix(folder, "mode");
    Object me = effectiveUser();
    if (!(mode instanceof Integer m) || (m & 01002) != 01002 || me == null) {
      return;
    }
    Object owner = unixNoFollow(link, "uid");
    if (owner != null && !owner.equals(me) && !owner.equals(unix(folder, "uid"))) {
      throw new IllegalArgumentException(option + " " + target + " is another user's link (" + link + ") in a"
          + " folder every user may write, which the system itself would not follow; expected a file of this"
          + " user's, or a new name");
    }
  }

  /** As {@link #unix}, for {@code file} itself where it is a link. */
  private static Object unixNoFollow(Path file, String name) throws IOException {
    try {
      return Files.getAttribute(file, "unix:" + name, LinkOption.NOFOLLOW_LINKS);
    } catch (UnsupportedOperationException | IllegalArgumentException notUnix) {
      return null;
    }
  }

  /** Whether {@code folder}, its links followed, lies under /proc. */
  private static boolean underProc(Path folder) {
    try {
      return folder != null && folder.toRealPath().startsWith(PROC);
    } catch (IOException e) {
      return false; // a folder that does not resolve is refused as missing later
    }
  }

  /** Where to write the content. */
  public Path temp() {
    return temp;
  }

  /** Writes the content with {@code writer}; a failure (a full disk, say) names the output, not the temporary file. */
  public void write(Writer writer) throws IOException {
    try {
      writer.writeTo(written);
    } catch (IllegalArgumentException e) {
      // a writer's refusal names the file it was given: the descriptor's name means nothing to the user
      String message = String.valueOf(e.getMessage());
      throw message.contains(written.toString()) && written != temp
          ? new IllegalArgumentException(message.replace(written.toString(), option + " " + shown), e) : e;
    } catch (IOException e) {
      throw new IllegalArgumentException(option + " " + shown + ": writing failed (" + reason(e)
          + "); the previous file, if any, is kept");
    }
  }

  private static String reason(IOException e) {
    if (e instanceof NoSuchFileException) {
      return "no such file or folder";
    }
    String why = e instanceof FileSystemException f ? f.getReason() : e.getMessage();
    return why == null ? e.getClass().getSimpleName() : why;
  }

  /**
   * Moves the complete temporary file onto the target as {@link #moveIntoPlace} does, with the permissions, group and
   * (as root) owner of the file it replaces. Its POSIX permissions only: an access control list of the old file is
   * not carried over (the JDK reads none on Linux), and where it had one, its group bits are the list's mask, which
   * the new file then grants its group.
   */
  public void commit() throws IOException {
    tempChannel.force(true); // the file created, whatever its name holds now
    if (newFilePermissions != null) {
      // the name moved into place must still hold the file written, not one a user who may write the folder put
      // there (a link, which the target's name would then be)
      BasicFileAttributes now = Files.readAttributes(temp, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
      // a link may take the removed file's inode number: its type tells it apart
      if (!now.isRegularFile() || tempKey != null && !tempKey.equals(now.fileKey())) {
        throw new IllegalArgumentException(option + " " + shown + ": its temporary file " + temp + " was replaced"
            + " during the run; the previous file, if any, is kept");
      }
      Set<PosixFilePermission> permissions = newFilePermissions;
      if (Files.exists(target)) {
        permissions = EnumSet.noneOf(PosixFilePermission.class);
        permissions.addAll(Files.getPosixFilePermissions(target));
        if (!keepOwners(written, target)) {
          // its group's permissions were for the old file's group, not this user's
          permissions.removeAll(EnumSet.of(PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE,
              PosixFilePermission.GROUP_EXECUTE));
        }
      }
      // after a change of owner, which clears the set-id bits
      bestEffortPermissions(written, permissions);
    }
    // last before the move: results read from an input that changed replace nothing
    MappedFiles.requireUnchanged();
    try {
      rename(temp, target);
    } catch (FileSystemException e) {
      // busy: a file mounted onto the name, which cannot be replaced
      String why = reason(e);
      throw new IllegalArgumentException(option + " " + shown + " cannot be replaced (" + why
          + (why.toLowerCase(java.util.Locale.ROOT).contains("busy") ? ": is a file mounted on it?" : "")
          + "); the previous file, if any, is kept");
    }
    committed = true;
    TemporaryFiles.done(temp);
    tempChannel.close();
  }

  /**
   * Gives {@code temp} (the descriptor's name, or the file's own) the group and owner of {@code target}, which it
   * replaces, as far as this user may (a group it belongs to, an owner only as root), through no link of the folder.
   * Returns whether the group is the old file's.
   */
  private static boolean keepOwners(Path temp, Path target) throws IOException {
    PosixFileAttributes old = Files.readAttributes(target, PosixFileAttributes.class);
    PosixFileAttributeView view = Files.getFileAttributeView(temp, PosixFileAttributeView.class, noLinkBut(temp));
    try {
      view.setGroup(old.group());
    } catch (IOException | SecurityException notOurs) {
      // a group this user is not in
    }
    try {
      if (!view.getOwner().equals(old.owner())) {
        view.setOwner(old.owner());
      }
    } catch (IOException | SecurityException notRoot) {
      // only root gives a file away
    }
    return view.readAttributes().group().equals(old.group());
  }

  /**
   * Replaces {@code target} with the complete file {@code temp} of the same folder, the one way every output of
   * the command line reaches its place: {@code temp} forced to disk first (so a crash right after cannot leave an
   * empty or partial file under the target's name), then renamed in one atomic step (a reader sees the old file or
   * the new one, never neither), then the folder forced (so the rename itself survives a crash).
   */
  public static void moveIntoPlace(Path temp, Path target) throws IOException {
    force(temp);
    MappedFiles.requireUnchanged(); // last before the move: results read from an input that changed replace nothing
    rename(temp, target);
  }

  private static void force(Path file) throws IOException {
    try (FileChannel written = FileChannel.open(file, StandardOpenOption.WRITE)) {
      written.force(true);
    }
  }

  private static void rename(Path temp, Path target) throws IOException {
    try {
      Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (AtomicMoveNotSupportedException e) {
      // a copy and delete instead could leave the target missing or half-written: refused, the old file kept
      throw new FileSystemException(target.toString(), null, "cannot be replaced in one step from " + temp
          + ", another file system");
    }
    Path folder = target.toAbsolutePath().getParent();
    try (FileChannel dir = FileChannel.open(folder, StandardOpenOption.READ)) {
      dir.force(true);
    } catch (IOException notSupported) {
      // some systems cannot open or force a folder: the file itself is on disk, only the rename may be lost
    }
  }

  /** Removes the temporary file unless it was committed, then the lock file (last, so no sweep takes it for dead). */
  @Override
  public void close() throws IOException {
    try {
      tempChannel.close();
      if (!committed) {
        Files.deleteIfExists(temp);
        TemporaryFiles.done(temp);
      }
    } finally {
      release(lockChannel, lockFile);
    }
  }

  /** Writes an output's content to the file it is given. */
  @FunctionalInterface
  public interface Writer {
    void writeTo(Path file) throws IOException;
  }
}
