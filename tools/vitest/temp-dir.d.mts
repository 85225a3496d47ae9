/** Makes the run's temporary directory and points TMPDIR, TMP and TEMP at it; returns the teardown. */
export default function setup(): () => void;
