/** servegate's own version, recorded in every result (kept in step with package.json by a test). */
export const HARNESS_VERSION = '0.1.0'
