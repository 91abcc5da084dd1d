/** Which course links leave the page. */

/** Whether a course URL should open in the browser (http/https only). */
export function isExternalCourseUrl(url: string): boolean {
  return /^https?:\/\//i.test(url);
}
